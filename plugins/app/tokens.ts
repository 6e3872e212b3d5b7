import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ACCESS_TOKEN_REFUSED, HttpError } from '../../lib/http/errors.js'
import type { UserRecord } from '../../lib/store/database.js'
import {
  InvalidTokenError,
  TokenService,
  type TokenServiceOptions,
  type TokenSession,
  type TokenUse
} from '../../lib/auth/tokens.js'

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService
    /**
     * A preValidation hook setting `request.user` and `request.session` from the `use` token `find` reads, or throwing
     * `refuse()` for any problem with the token, its user or its session; before validation, so a missing token gets
     * the token's own answer, not a schema 400.
     */
    tokenGuard: (
      use: TokenUse,
      find: (request: FastifyRequest) => unknown,
      refuse: () => HttpError
    ) => (request: FastifyRequest) => Promise<void>
    /** preValidation hook: 403 unless `access_token` is valid; sets `request.user`. */
    requireAccessToken: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    /** The user a token guard let through; null on a route without one. */
    user: UserRecord | null
    /** The guarded token's session; null without a guard, or for an access token older than sessions. */
    session: TokenSession | null
  }
}

/**
 * A token holds only while its user exists, its version matches the user's (a password change raises it) and its
 * session is open: removal and password changes revoke every token of the user at once, a logout its session's.
 */
export default fp(async function tokens (fastify: FastifyInstance, options: TokenServiceOptions) {
  const service = new TokenService(options)
  fastify.decorate('tokens', service)
  fastify.decorateRequest('user', null)
  fastify.decorateRequest('session', null)

  /** The user and session a token was issued to, if the token, the user and the session all still hold. */
  async function holderOf (token: unknown, use: TokenUse): Promise<{ user: UserRecord, session: TokenSession | null }> {
    const verified = service.verify(token, use)
    // First: it waits for the request's read of the counters, which the session check relies on.
    const user = await fastify.users.user(verified.userId)
    if (user === undefined) throw new InvalidTokenError('user removed')
    if (user.tokenVersion !== verified.tokenVersion) throw new InvalidTokenError('issued before a password change')
    if (verified.sessionId === null) return { user, session: null }
    const session = await fastify.sessions.open(verified.sessionId, user.id)
    if (session === undefined) throw new InvalidTokenError('session ended or expired')
    return { user, session: { id: verified.sessionId, expiresAt: session.expiresAt } }
  }

  function tokenGuard (use: TokenUse, find: (request: FastifyRequest) => unknown, refuse: () => HttpError) {
    return async function guard (request: FastifyRequest): Promise<void> {
      try {
        const { user, session } = await holderOf(find(request), use)
        request.user = user
        request.session = session
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
}, { name: 'tokens', dependencies: ['users', 'sessions'] })
