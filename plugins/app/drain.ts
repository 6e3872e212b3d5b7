import { Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface DrainOptions {
  delayMs: number
  /** On close, how long open connections may carry one more request (`Connection: close`) before idle ones close. */
  retireMs?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Out of rotation: readiness answers 503, requests still served; resolves after the drain delay, then close. */
    drain: () => Promise<void>
    /** True once `drain()` was called or the app began to close. */
    readonly draining: boolean
  }
}

/** Closing an idle connection as a balancer sends on it makes a 502: retire them first (docs/operations.md). */
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
