import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * `X-Content-Type-Options: nosniff` on every answer, errors and 404s included: a browser must take a
 * JSON body for JSON, never sniff it as HTML (a JSON error that quotes the input could otherwise run
 * as a page). deploy/nginx.conf sets it on the balancer's own answers.
 */
export default fp(async function nosniff (fastify: FastifyInstance) {
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff')
    done()
  })
}, { name: 'nosniff' })
