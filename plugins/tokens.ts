import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'
import type { UserRecord } from '../lib/store/user-store.js'
import { InvalidTokenError, TokenService, type TokenServiceOptions, type TokenUse } from '../lib/tokens.js'

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService
    /** The user a token was issued to, if the token and the user both still hold. */
    userForToken: (token: unknown, use: TokenUse) => Promise<UserRecord>
    /** preValidation hook: 403 unless `access_token` is valid; sets `request.user`. */
    requireAccessToken: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
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

  async function userForToken (token: unknown, use: TokenUse): Promise<UserRecord> {
    const verified = service.verify(token, use)
    const user = await fastify.store.findById(verified.userId)
    if (user === undefined) throw new InvalidTokenError('user removed')
    if (user.tokenVersion !== verified.tokenVersion) throw new InvalidTokenError('issued before a password change')
    return user
  }
  fastify.decorate('userForToken', userForToken)

  // A preValidation hook, so that a missing or bad token answers 403 before the schema
  // would answer 400 for the missing parameter.
  fastify.decorate('requireAccessToken', async function requireAccessToken (request: FastifyRequest) {
    const token = (request.query as Record<string, unknown> | undefined)?.access_token ??
      (request.body as Record<string, unknown> | undefined)?.access_token
    try {
      request.user = await userForToken(token, 'access')
    } catch (error) {
      if (error instanceof InvalidTokenError) throw new HttpError(403, ACCESS_TOKEN_REFUSED)
      throw error
    }
    // Presence is a side effect of reading: it must not fail the read it rides on.
    await fastify.store.markSeen(request.user.id).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record the user as seen')
    })
  })
}, { name: 'tokens', dependencies: ['store'] })
