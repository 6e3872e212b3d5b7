import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** nosniff on every answer: a browser must never take a JSON body (an error quoting input) for HTML. */
export default fp(async function nosniff (fastify: FastifyInstance) {
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff')
    done()
  })
}, { name: 'nosniff' })
