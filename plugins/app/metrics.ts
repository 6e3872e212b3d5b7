import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { BoundHistogram } from '../../lib/metrics/bound-histogram.js'

declare module 'fastify' {
  interface FastifyInstance {
    metricsRegistry: Registry
  }
}

/** prom-client's defaults plus 1 ms, for the fastest answers; alerts on the default bounds still work. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** HEAD routes only mirror GET ones. */
const UNTIMED_METHODS = new Set(['HEAD', 'OPTIONS', 'TRACE', 'CONNECT'])

/** By route pattern, never the raw URL (it carries tokens); a series bound once per route, method and status. */
function timeEachRoute (fastify: FastifyInstance, durations: BoundHistogram): void {
  fastify.addHook('onRoute', (route) => {
    const methods = [route.method].flat().filter((method) => !UNTIMED_METHODS.has(method))
    if (methods.length === 0) return
    const byMethod = new Map(methods.map((method) => [method, new Map<number, (seconds: number) => void>()]))
    const observe = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      const byStatus = byMethod.get(request.method)
      if (byStatus !== undefined) {
        let observeSeconds = byStatus.get(reply.statusCode)
        if (observeSeconds === undefined) {
          const labels = { method: request.method, route: route.url, status_code: String(reply.statusCode) }
          observeSeconds = durations.series(labels)
          byStatus.set(reply.statusCode, observeSeconds)
        }
        // From the request's arrival until its response was handed to the operating system.
        observeSeconds(reply.elapsedTime / 1000)
      }
      done()
    }
    route.onResponse = [...[route.onResponse ?? []].flat(), observe]
  })
}

function growthOfCounts (): (name: string, total: number) => number {
  const counted = new Map<string, number>()
  return (name, total) => {
    const growth = total - (counted.get(name) ?? 0)
    counted.set(name, total)
    return growth
  }
}

/** Listed in docs/operations.md; served by `listenForMetrics` on a port the balancer never forwards to, not a route. */
export default fp(async function metrics (fastify: FastifyInstance) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  timeEachRoute(fastify, new BoundHistogram({
    name: 'http_request_duration_seconds',
    help: 'request duration in seconds',
    buckets: DURATION_BUCKETS,
    registers: [registry]
  }))

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
  // Counts the app keeps since it started: each scrape adds what they grew by.
  const grown = growthOfCounts()
  new Counter({
    name: 'meridian_login_refused_throttle_unavailable_total',
    help: 'Logins refused (503) because the login throttle\'s store (Redis) failed',
    registers: [registry],
    collect () { this.inc(grown('throttle refusals', fastify.loginThrottle.refusedForStoreFailure)) }
  })
  new Counter({
    name: 'meridian_fair_share_refusals_total',
    help: 'Requests refused with 429 because their client was past its fair share, by route and by the policy ' +
      'that refused',
    labelNames: ['route', 'policy'],
    registers: [registry],
    collect () {
      for (const { route, policy, count } of fastify.fairShare.refusals()) {
        this.inc({ route, policy }, grown(`fair share: ${route} ${policy}`, count))
      }
    }
  })
  new Counter({
    name: 'meridian_unrouted_requests_total',
    help: 'Requests that matched no route, answered 404: scanners, mistyped paths, clients of another API',
    registers: [registry],
    collect () { this.inc(grown('unrouted', fastify.unroutedRequests)) }
  })
  new Counter({
    name: 'meridian_sessions_started_total',
    help: 'Sessions started (successful logins)',
    registers: [registry],
    collect () { this.inc(grown('sessions started', fastify.sessions.started)) }
  })
  new Counter({
    name: 'meridian_sessions_ended_total',
    help: 'Sessions ended, by cause (logout, expiry, password, removal, operator), counted when this replica ' +
      'pruned them (within a minute of their end): summed over replicas, every session once, whoever ended it',
    labelNames: ['cause'],
    registers: [registry],
    collect () {
      for (const [cause, pruned] of Object.entries(fastify.sessions.pruned)) {
        this.inc({ cause }, grown(`ended: ${cause}`, pruned))
      }
    }
  })
  if (fastify.users.countersTold !== undefined) {
    new Gauge({
      name: 'meridian_database_notifications_live',
      help: 'Whether the replica learns of changes to the users from PostgreSQL notifications (1) or reads the ' +
        'user counters per request (0)',
      registers: [registry],
      collect () { this.set(fastify.users.countersTold === true ? 1 : 0) }
    })
  }
  const pool = fastify.database.pool
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
}, {
  name: 'metrics',
  dependencies: ['unrouted', 'database', 'users', 'markdown-renderer', 'login-throttle', 'sessions', 'fair-share']
})

/** Serves `GET /metrics` of `app` on an address of its own; the caller closes it. */
export async function listenForMetrics (app: FastifyInstance, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
        .end('{"error":{"code":404,"message":"Not found"}}')
      return
    }
    app.metricsRegistry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': app.metricsRegistry.contentType }).end(text)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'metrics failed')
      response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
        .end('{"error":{"code":500,"message":"Internal server error"}}')
    })
  })
  server.listen(port, host)
  await once(server, 'listening')
  return server
}
