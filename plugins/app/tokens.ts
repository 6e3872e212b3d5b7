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
    /** Sets `request.user` and `request.session`, or throws `refuse()`; before validation, so no schema 400 first. */
    tokenGuard: (
      use: TokenUse,
      find: (request: FastifyRequest) => unknown,
      refuse: () => HttpError
    ) => (request: FastifyRequest) => Promise<void>
    requireAccessToken: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    user: UserRecord | null
    /** The guarded token's session; null without a guard, or for an access token older than sessions. */
    session: TokenSession | null
  }
}

/** A token holds while its user exists, its version matches (a password change raises it) and its session is open. */
export default fp(async function tokens (fastify: FastifyInstance, options: TokenServiceOptions) {
  const service = new TokenService(options)
  fastify.decorate('tokens', service)
  fastify.decorateRequest('user', null)
  fastify.decorateRequest('session', null)

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
