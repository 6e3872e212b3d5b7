import type { FastifyInstance, FastifyRequest, FastifyReply, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Readable } from 'node:stream'
import { HttpError } from '../../lib/http/errors.js'

export interface RequestTimeoutOptions {
  /** REQUEST_TIMEOUT, in ms: from the request's arrival until its body has all arrived. */
  timeoutMs: number
}

/**
 * A body must arrive whole within the request timeout, counted from the request's arrival: a client
 * that sends one a byte at a time (slowly, or to hold connections on purpose) gets 408 with the
 * error body and its connection closed. Node's own requestTimeout stops counting once a handler reads
 * the body, so it cannot do this. Headers are Node's to time (headersTimeout). Behind nginx a body
 * arrives whole (it buffers them); a replica reached directly has only this.
 */
export default fp(async function requestTimeout (fastify: FastifyInstance, options: RequestTimeoutOptions) {
  const timeBody = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
    done: (error: Error | null, payload?: Readable) => void
  ): void => {
    if (request.raw.complete) return done(null, payload)
    const remainingMs = Math.max(0, options.timeoutMs - reply.elapsedTime)
    const timer = setTimeout(() => {
      if (!reply.sent && payload.listenerCount('error') > 0) {
        // Fastify's body reader takes the stream's 'error' as the end of the body, and the error
        // handler answers it. Not destroy(): that would close the socket before the answer.
        payload.emit('error', new HttpError(408, 'Request Timeout', { connection: 'close' }))
      } else {
        // Answered already (413 before reading, say) while the client still trickles the body Node
        // reads to discard it: nothing more to say to it.
        request.raw.destroy()
      }
    }, remainingMs)
    // A guard on the client, never what keeps a closing process alive: a body refused before it is read (413) under
    // inject never ends, and its timer held each test process open for REQUEST_TIMEOUT after its last test.
    timer.unref()
    const settle = (): void => { clearTimeout(timer) }
    payload.once('end', settle)
    payload.once('close', settle)
    done(null, payload)
  }
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat()
    if (!methods.some((method) => method === 'POST' || method === 'PUT' || method === 'PATCH')) return
    route.preParsing = [...[route.preParsing ?? []].flat(), timeBody]
  })
}, { name: 'request-timeout' })
