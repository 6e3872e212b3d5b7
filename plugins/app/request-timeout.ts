import type { FastifyInstance, FastifyRequest, FastifyReply, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Readable } from 'node:stream'
import { HttpError } from '../../lib/http/errors.js'

export interface RequestTimeoutOptions {
  /** REQUEST_TIMEOUT, in ms: from the request's arrival until its body has all arrived. */
  timeoutMs: number
}

/** Node's requestTimeout stops once a handler reads the body: a trickling body gets 408 here, connection closed. */
export default fp(async function requestTimeout (fastify: FastifyInstance, options: RequestTimeoutOptions) {
  const armTimer = (request: FastifyRequest, reply: FastifyReply, payload: Readable): void => {
    const remainingMs = Math.max(0, options.timeoutMs - reply.elapsedTime)
    const timer = setTimeout(() => {
      if (!reply.sent && payload.listenerCount('error') > 0) {
        // Fastify's body reader ends on the stream's 'error' and the error handler answers; destroy() would cut it off.
        payload.emit('error', new HttpError(408, 'Request Timeout', { connection: 'close' }))
      } else {
        // Answered already (a 413, say) while Node still reads the trickling body to discard it.
        request.raw.destroy()
      }
    }, remainingMs)
    // A guard on the client, never what keeps a closing process alive: a body refused unread under inject never ends.
    timer.unref()
    const settle = (): void => { clearTimeout(timer) }
    payload.once('end', settle)
    payload.once('close', settle)
  }
  // Hooks run while Node parses the packet that brought the headers; a body that came with them is parsed by the
  // event loop's next check phase. Only a body still arriving then needs a timer (about 1 µs, docs/performance.md).
  let arriving: Array<{ request: FastifyRequest, reply: FastifyReply, payload: Readable }> = []
  const timeStillArriving = (): void => {
    const bodies = arriving
    arriving = []
    for (const { request, reply, payload } of bodies) {
      if (!request.raw.complete && !payload.destroyed && !payload.readableEnded) armTimer(request, reply, payload)
    }
  }
  const timeBody = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
    done: (error: Error | null, payload?: Readable) => void
  ): void => {
    if (!request.raw.complete) {
      if (arriving.length === 0) setImmediate(timeStillArriving)
      arriving.push({ request, reply, payload })
    }
    done(null, payload)
  }
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat()
    if (!methods.some((method) => method === 'POST' || method === 'PUT' || method === 'PATCH')) return
    route.preParsing = [...[route.preParsing ?? []].flat(), timeBody]
  })
}, { name: 'request-timeout' })
