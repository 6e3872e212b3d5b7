import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from '../../lib/http/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    readonly unroutedRequests: number
  }
}

/** Before any body is read: unknown routes 404, counted; no Host 400, as Node's refusal has no JSON body. */
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
