import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import fp from 'fastify-plugin'
import { isDependencyUnavailable, unavailabilityReason } from '../lib/store/unavailable.js'
import type { ErrorBody } from '../schemas/common.js'

/** A failure whose status and message the client sees. */
export class HttpError extends Error {
  override name = 'HttpError'
  constructor (
    readonly statusCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {
    super(message)
  }
}

export function errorBody (code: number, message: string): ErrorBody {
  return { error: { code, message } }
}

const messageByFastifyCode: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported media type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Body too large',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Malformed JSON body',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Invalid Content-Length',
  FST_ERR_CTP_EMPTY_TYPE: 'Unsupported media type'
}

/** `latitude must be <= 90`, `username is required`: the first problem, naming the field. */
export function describeValidationError (errors: FastifySchemaValidationError[], context?: string): string {
  const first = errors[0]
  if (first === undefined) return 'Invalid request'
  const params = first.params as Record<string, unknown>
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    return `${params.missingProperty} is required`
  }
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.')
  return `${field === '' ? (context ?? 'request') : field} ${first.message ?? 'is invalid'}`
}

interface PublicError { statusCode: number, message: string, headers: Readonly<Record<string, string>> }

/** @fastify/under-pressure's refusal: the replica is overloaded. */
function isOverloadRefusal (error: FastifyError | HttpError): boolean {
  return 'code' in error && error.code === 'FST_UNDER_PRESSURE'
}

/** Why a 503 is no bug: the service chose it (draining, overload) or a dependency is away (database, lock). */
function refusalReason (error: FastifyError | HttpError): string | undefined {
  if (error instanceof HttpError) return error.message
  if (isOverloadRefusal(error)) return 'Overloaded'
  if (isDependencyUnavailable(error)) return unavailabilityReason(error)
  return undefined
}

function toPublicError (error: FastifyError | HttpError): PublicError {
  if (error instanceof HttpError) {
    return { statusCode: error.statusCode, message: error.message, headers: error.headers }
  }
  if ('validation' in error && error.validation !== undefined) {
    return { statusCode: 400, message: describeValidationError(error.validation, error.validationContext), headers: {} }
  }
  const statusCode = error.statusCode ?? 500
  if (statusCode >= 400 && statusCode < 500) {
    // Fastify's own 4xx (parsing, media type, size): a fixed message, never the parser's text.
    const known = error.code !== undefined ? messageByFastifyCode[error.code] : undefined
    if (known !== undefined) return { statusCode, message: known, headers: {} }
    if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return { statusCode, message: 'Malformed JSON body', headers: {} }
    }
    return { statusCode, message: STATUS_CODES[statusCode] ?? 'Bad request', headers: {} }
  }
  if (statusCode === 503 || isDependencyUnavailable(error)) {
    return { statusCode: 503, message: 'Service unavailable', headers: {} }
  }
  return { statusCode: 500, message: 'Internal server error', headers: {} }
}

/** Fastify's `frameworkErrors`: failures before routing (a malformed URL escape) answer the contract's body too. */
export function frameworkErrors (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400
  // Before any hook: plugins/nosniff.ts has not run.
  void reply.code(statusCode).header('x-content-type-options', 'nosniff').send(errorBody(statusCode, STATUS_CODES[statusCode] ?? 'Bad request'))
}

const clientErrorStatus: Readonly<Record<string, number>> = { HPE_HEADER_OVERFLOW: 431, ERR_HTTP_REQUEST_TIMEOUT: 408 }

/** Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses never reaches Fastify, so answer it here. */
export function clientErrorHandler (error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (socket.writable) {
    const statusCode = clientErrorStatus[error.code ?? ''] ?? 400
    const reason = STATUS_CODES[statusCode] as string
    const body = JSON.stringify(errorBody(statusCode, reason))
    socket.write(`HTTP/1.1 ${statusCode} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests that matched no route (answered 404) since start, for the metrics. */
    readonly unroutedRequests: number
  }
}

/** Every failure, Fastify's own included, answers the contract's body; no stack, parser text or SQL leaks out. */
export default fp(async function errors (fastify: FastifyInstance) {
  let unroutedRequests = 0
  fastify.decorate('unroutedRequests', { getter: () => unroutedRequests })

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

  fastify.setNotFoundHandler(function notFound (_request, reply) {
    unroutedRequests++
    return reply.code(404).send(errorBody(404, 'Not found'))
  })

  // A callback hook, not an async one: it runs on every request, and most pass straight through.
  fastify.addHook('onRequest', (request, reply, done) => {
    // HTTP/1.1 requires Host; Node's own refusal has no JSON body (see requireHostHeader in app.ts).
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      reply.code(400).send(errorBody(400, 'Host header is required'))
    } else if (request.is404) {
      // An unknown route answers 404 before its body is read: not 400 for malformed JSON, nor 413.
      unroutedRequests++
      reply.code(404).send(errorBody(404, 'Not found'))
    } else {
      done()
    }
  })
}, { name: 'errors' })
