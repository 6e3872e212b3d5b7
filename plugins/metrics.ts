import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastifyMetricsModule from 'fastify-metrics'
import { Counter, Gauge, Registry } from 'prom-client'

// A CommonJS module whose plugin is its `default` export.
const fastifyMetrics = fastifyMetricsModule.default

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, in the Prometheus text format through `metricsRegistry.metrics()`. */
    metricsRegistry: Registry
  }
}

/**
 * Prometheus metrics of this app, in a registry of its own: requests by route pattern (never the
 * raw URL, which carries tokens), method and status, with their latency (fastify-metrics); Node's
 * defaults, event-loop delay included (prom-client); the Markdown render queue; the database pool;
 * logins the throttle refused because its store failed (plugins/health.ts adds readiness).
 * No route serves them: `listenForMetrics` does, on a port of its own that the balancer never
 * forwards to.
 */
export default fp(async function metrics (fastify: FastifyInstance) {
  const registry = new Registry()
  await fastify.register(fastifyMetrics, {
    endpoint: null,
    defaultMetrics: { enabled: true, register: registry },
    routeMetrics: {
      enabled: { histogram: true, summary: false },
      // Both in this registry (the summary is off, but fastify-metrics still creates it).
      overrides: { histogram: { registers: [registry] }, summary: { registers: [registry] } }
    }
  })

  new Gauge({
    name: 'meridian_markdown_pending_characters',
    help: 'Characters of Markdown waiting for or in a render thread',
    registers: [registry],
    collect () { this.set(fastify.markdown.load().pendingCharacters) }
  })
  new Gauge({
    name: 'meridian_markdown_queued_renders',
    help: 'Markdown renders waiting for a free render thread',
    registers: [registry],
    collect () { this.set(fastify.markdown.load().queuedRenders) }
  })
  let refusalsCounted = 0
  new Counter({
    name: 'meridian_login_refused_throttle_unavailable_total',
    help: 'Logins refused (503) because the login throttle\'s store (Redis) failed',
    registers: [registry],
    collect () {
      const refusals = fastify.loginThrottle.refusedForStoreFailure
      this.inc(refusals - refusalsCounted)
      refusalsCounted = refusals
    }
  })
  const pool = fastify.store.pool
  if (pool !== undefined) {
    new Gauge({
      name: 'meridian_database_pool_connections',
      help: 'PostgreSQL pool connections by state (waiting: queries waiting for a connection)',
      labelNames: ['state'],
      registers: [registry],
      collect () {
        this.set({ state: 'total' }, pool.totalCount)
        this.set({ state: 'idle' }, pool.idleCount)
        this.set({ state: 'waiting' }, pool.waitingCount)
      }
    })
  }
  fastify.decorate('metricsRegistry', registry)
}, { name: 'metrics', dependencies: ['store', 'markdown-renderer', 'login-throttle'] })

/** Serves `GET /metrics` of `app` on an address of its own; the caller closes it. */
export async function listenForMetrics (app: FastifyInstance, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":{"code":404,"message":"Not found"}}')
      return
    }
    app.metricsRegistry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': app.metricsRegistry.contentType }).end(text)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'metrics failed')
      response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":{"code":500,"message":"Internal server error"}}')
    })
  })
  server.listen(port, host)
  await once(server, 'listening')
  return server
}
