import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

const REQUEST_ID_HEADER = 'x-request-id'

/** What a balancer or client may send as an id (deploy/nginx.conf passes the same set on). */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The `x-request-id` sent if a plain token of ≤ 128 characters, else a UUID: no client-smuggled text in logs. */
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
