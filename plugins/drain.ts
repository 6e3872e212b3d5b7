import { Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface DrainOptions {
  /** How long `drain()` keeps the replica serving, its readiness answering 503. */
  delayMs: number
  /**
   * When the app closes, how long connections still open may carry one more request (answered
   * with `Connection: close`) before the idle ones are closed; 1 s by default.
   */
  retireMs?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Takes the replica out of rotation: from now on `/health/ready` answers 503 while every
     * request is still served as before; resolves after the drain delay, when a balancer that
     * watches readiness has stopped sending new work. Then close the app.
     */
    drain: () => Promise<void>
    /** True once `drain()` was called or the app began to close. */
    readonly draining: boolean
  }
}

/**
 * Closing a replica without losing a request behind a balancer that keeps idle connections to
 * it (nginx's `keepalive`). If the replica closed an idle connection at the moment the balancer
 * sent a request on it, the balancer could not know whether the request was handled and, for a
 * POST, would answer 502. So on close the replica first stops accepting (the balancer's next new
 * connection is refused, which it retries elsewhere and counts against the replica: it stops
 * choosing it), then answers whatever still arrives on open connections with `Connection: close`
 * for up to `retireMs`, and only then closes the connections still idle. Node's own
 * `server.close()` would close the idle ones at once.
 */
export default fp(async function drain (fastify: FastifyInstance, options: DrainOptions) {
  const retireMs = options.retireMs ?? 1000
  let draining = false
  let closing = false
  let drained: Promise<void> | undefined

  fastify.decorate('draining', { getter: () => draining })
  fastify.decorate('drain', async function () {
    if (drained === undefined) {
      draining = true
      fastify.log.info({ delayMs: options.delayMs }, 'draining: readiness answers 503, requests are still served')
      drained = sleep(options.delayMs)
    }
    await drained
  })

  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })

  fastify.addHook('preClose', async () => {
    draining = true
    closing = true
    const server = fastify.server
    if (!server.listening) return
    // net.Server's close, not http.Server's: stop accepting, but leave idle connections open.
    Server.prototype.close.call(server)
    const deadline = performance.now() + retireMs
    while (await openConnections(server) > 0 && performance.now() < deadline) await sleep(20)
  })
}, { name: 'drain' })

async function openConnections (server: Server): Promise<number> {
  return await new Promise((resolve) => {
    server.getConnections((error, count) => { resolve(error === null ? count : 0) })
  })
}
