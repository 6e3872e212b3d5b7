import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'
import type { UserRecord } from '../lib/store/user-store.js'
import { InvalidTokenError, TokenService, type TokenServiceOptions, type TokenUse } from '../lib/tokens.js'

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService
    /**
     * A preValidation hook that sets `request.user` to the user of the `use` token `find` reads
     * from the request, or throws what `refuse` makes for any problem with the token or its user.
     * Before validation, so a missing or malformed token gets the token's own answer, not a
     * schema 400.
     */
    tokenGuard: (use: TokenUse, find: (request: FastifyRequest) => unknown, refuse: () => HttpError) => (request: FastifyRequest) => Promise<void>
    /** preValidation hook: 403 unless `access_token` is valid; sets `request.user`. */
    requireAccessToken: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    /** The user a token guard let through; null on a route without one. */
    user: UserRecord | null
  }
}

export const ACCESS_TOKEN_REFUSED = 'Token expired or invalid'

/**
 * Token issue and verification. A token holds only while its user exists and its version
 * matches the user's (a password change raises it), so removal and password changes revoke
 * every token at once.
 */
export default fp(async function tokens (fastify: FastifyInstance, options: TokenServiceOptions) {
  const service = new TokenService(options)
  fastify.decorate('tokens', service)
  fastify.decorateRequest('user', null)

  /** The user a token was issued to, if the token and the user both still hold. */
  async function userForToken (token: unknown, use: TokenUse): Promise<UserRecord> {
    const verified = service.verify(token, use)
    const user = await fastify.directory.user(verified.userId)
    if (user === undefined) throw new InvalidTokenError('user removed')
    if (user.tokenVersion !== verified.tokenVersion) throw new InvalidTokenError('issued before a password change')
    return user
  }

  function tokenGuard (use: TokenUse, find: (request: FastifyRequest) => unknown, refuse: () => HttpError) {
    return async function guard (request: FastifyRequest): Promise<void> {
      try {
        request.user = await userForToken(find(request), use)
      } catch (error) {
        if (error instanceof InvalidTokenError) throw refuse()
        throw error
      }
    }
  }
  fastify.decorate('tokenGuard', tokenGuard)

  const accessGuard = tokenGuard('access', (request) =>
    (request.query as Record<string, unknown> | undefined)?.access_token ??
    (request.body as Record<string, unknown> | undefined)?.access_token,
  () => new HttpError(403, ACCESS_TOKEN_REFUSED))
  fastify.decorate('requireAccessToken', accessGuard)
}, { name: 'tokens', dependencies: ['directory'] })
