import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody, type HttpError, refusalReason, toPublicError } from '../../lib/http/errors.js'

/** Every failure, Fastify's own included, answers the contract's body; no stack, parser text or SQL leaks out. */
export default fp(async function errors (fastify: FastifyInstance) {
  fastify.setErrorHandler(function handleError (error: FastifyError | HttpError, request, reply) {
    const { statusCode, message, headers } = toPublicError(error)
    const refusal = statusCode >= 500 ? refusalReason(error) : undefined
    if (refusal !== undefined) {
      // A line, not a stack: under overload or an outage a stack per refusal adds load and says nothing more.
      request.log.warn({ statusCode, reason: refusal }, 'request not served')
    } else if (statusCode >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else {
      request.log.info({ statusCode, reason: message }, 'request refused')
    }
    return reply.code(statusCode).headers(headers).send(errorBody(statusCode, message))
  })
}, { name: 'errors' })
