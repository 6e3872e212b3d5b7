import {
  Type,
  type IntegerOptions,
  type SchemaOptions,
  type Static,
  type TInteger,
  type TSchema,
  type TUnsafe
} from '@sinclair/typebox'

/** A `$ref` to a named schema that keeps its static type: routes see the real shape, OpenAPI one named component. */
export function ref<T extends TSchema> (schema: T, options: SchemaOptions = {}): TUnsafe<Static<T>> {
  if (typeof schema.$id !== 'string') throw new TypeError('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(`${schema.$id}#`, options))
}

/** Typed generators need the width: UNIX seconds and anything that may pass 2^31 are int64, small counts int32. */
export function Int64 (options: IntegerOptions = {}): TInteger {
  return Type.Integer({ format: 'int64', ...options })
}

export function Int32 (options: IntegerOptions = {}): TInteger {
  return Type.Integer({ format: 'int32', ...options })
}

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Int32({ description: 'The HTTP status of the response', minimum: 400, maximum: 599 }),
      message: Type.String({ description: 'Short English description of the failure' })
    }, { additionalProperties: false })
  },
  { $id: 'ErrorBody', additionalProperties: false, description: 'Body of every non-2xx response' }
)
export type ErrorBody = Static<typeof ErrorBody>

/** The answer of an operation that has nothing to return but that it was done: health checks, logout. */
export const Status = Type.Object({ status: Type.Literal('ok') }, {
  $id: 'Status',
  additionalProperties: false,
  examples: [{ status: 'ok' }]
})

/** The IETF draft's rate-limit header fields (draft-ietf-httpapi-ratelimit-headers) on every API answer. */
const rateLimitHeaders = {
  ratelimit: Type.String({
    description: 'What the client has left of each quota policy and the seconds until it is whole again, ' +
      'e.g. `"requests";r=599;t=60`. Always on the Markdown route and on a fair-share 429; elsewhere once the ' +
      'client has used half its quota of requests; never for an address exempt from the limits'
  }),
  'ratelimit-policy': Type.String({
    description: 'The quota policies of this operation, per client address, e.g. `"requests";q=1200;w=60` ' +
      '(`qu="content-bytes"`: bytes of request bodies; `qu="concurrent-requests"`: requests at once); ' +
      'sent with RateLimit'
  })
}

/** Options of a limited route's success schema: its answer carries the rate-limit headers. */
export const withRateLimitHeaders = { headers: rateLimitHeaders }

const retryAfterHeaders = {
  'retry-after': Int32({ minimum: 1, description: 'Seconds to wait before trying again' }),
  ...rateLimitHeaders
}

/** What the service answers for each error status, where a route does not say more precisely. */
const errorMessages: Readonly<Record<number, string>> = {
  400: 'Invalid request',
  403: 'Forbidden',
  404: 'Not found',
  408: 'Request Timeout',
  413: 'Body too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable'
}

/** Error responses, all ErrorBody, each described by its message (the route's own or the usual one). */
export function errorResponses<const C extends readonly number[]> (
  codes: C,
  messages: Partial<Record<C[number], string>> = {}
): { [K in C[number]]: TUnsafe<ErrorBody> } {
  return Object.fromEntries(codes.map((code: C[number]) => {
    const message = messages[code] ?? errorMessages[code] ?? 'Error'
    return [code, ref(ErrorBody, code === 429
      ? { description: message, headers: retryAfterHeaders }
      : { description: message })]
  })) as { [K in C[number]]: TUnsafe<ErrorBody> }
}

/** The statuses any route can answer whatever its own logic: bad input, failure, overload. */
export const commonErrors = [400, 500, 503] as const

/** The statuses any API route can answer: those, and 429 past the client's fair share. */
export const apiErrors = [...commonErrors, 429] as const

/** The statuses of a route that reads a body: sent too slowly (REQUEST_TIMEOUT), too large, not JSON or a form. */
export const bodyErrors = [408, 413, 415] as const

export const Page = Int64({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  default: 1,
  description: 'Page number, from 1'
})
/** The page size when a request names none: its one home, read by the list's links too. */
export const DEFAULT_PER_PAGE = 20
export const PerPage = Int32({ minimum: 1, maximum: 100, default: DEFAULT_PER_PAGE, description: 'Users per page' })
