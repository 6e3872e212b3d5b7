import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from '../../lib/http/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests that matched no route (answered 404) since start, for the metrics. */
    readonly unroutedRequests: number
  }
}

/**
 * Answered before any body is read: an unknown route 404 (not 400 or 413), counted; an HTTP/1.1 request without Host
 * 400, since Node's own refusal has no JSON body (requireHostHeader in app.ts).
 */
export default fp(async function unrouted (fastify: FastifyInstance) {
  let unroutedRequests = 0
  fastify.decorate('unroutedRequests', { getter: () => unroutedRequests })

  fastify.setNotFoundHandler(function notFound (_request, reply) {
    unroutedRequests++
    return reply.code(404).send(errorBody(404, 'Not found'))
  })

  // A callback hook, not an async one: it runs on every request, and most pass straight through.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      reply.code(400).send(errorBody(400, 'Host header is required'))
    } else if (request.is404) {
      unroutedRequests++
      reply.code(404).send(errorBody(404, 'Not found'))
    } else {
      done()
    }
  })
}, { name: 'unrouted' })
