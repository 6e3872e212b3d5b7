import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

const REQUEST_ID_HEADER = 'x-request-id'

/** What a balancer or client may send as an id (deploy/nginx.conf passes the same set on). */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Fastify's `genReqId`: the `x-request-id` the balancer (or client) sent when it is a plain
 * token of at most 128 characters, otherwise a new UUID. Fastify logs it as `reqId` on every
 * line of the request. Anything else is replaced, so a log line never carries what a client
 * smuggled into the header (newlines, control characters, megabytes).
 */
export function requestIdOf (request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER]
  return typeof sent === 'string' && ACCEPTABLE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Every response carries the request's id, errors and 404s included, so a caller can quote it. */
export default fp(async function requestId (fastify: FastifyInstance) {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done()
  })
}, { name: 'request-id' })
