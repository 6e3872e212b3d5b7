import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { isDependencyUnavailable, unavailabilityReason } from '../store/unavailable.js'
import type { ErrorBody } from '../../schemas/common.js'

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

/** The 403 of a route behind an access token (plugins/app/tokens.ts): one message for every reason, so none leaks. */
export const ACCESS_TOKEN_REFUSED = 'Token expired or invalid'

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

export interface PublicError { statusCode: number, message: string, headers: Readonly<Record<string, string>> }

/** @fastify/under-pressure's refusal: the replica is overloaded. */
function isOverloadRefusal (error: FastifyError | HttpError): boolean {
  return 'code' in error && error.code === 'FST_UNDER_PRESSURE'
}

/** Why a 503 is no bug: the service chose it (draining, overload) or a dependency is away (database, lock). */
export function refusalReason (error: FastifyError | HttpError): string | undefined {
  if (error instanceof HttpError) return error.message
  if (isOverloadRefusal(error)) return 'Overloaded'
  if (isDependencyUnavailable(error)) return unavailabilityReason(error)
  return undefined
}

export function toPublicError (error: FastifyError | HttpError): PublicError {
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
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500
    ? error.statusCode
    : 400
  // Before any hook: the nosniff plugin has not run.
  void reply.code(statusCode).header('x-content-type-options', 'nosniff')
    .send(errorBody(statusCode, STATUS_CODES[statusCode] ?? 'Bad request'))
}

const clientErrorStatus: Readonly<Record<string, number>> = { HPE_HEADER_OVERFLOW: 431, ERR_HTTP_REQUEST_TIMEOUT: 408 }

/** Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses never reaches Fastify, so answer it here. */
export function clientErrorHandler (error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (socket.writable) {
    const statusCode = clientErrorStatus[error.code ?? ''] ?? 400
    const reason = STATUS_CODES[statusCode] as string
    const body = JSON.stringify(errorBody(statusCode, reason))
    socket.write(`HTTP/1.1 ${statusCode} ${reason}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}
