import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccessTokenGrant, RefreshRequest } from '../../../schemas/auth.js'
import { commonErrors, errorResponses, ref } from '../../../schemas/common.js'
import { HttpError } from '../../../plugins/errors.js'
import { InvalidTokenError } from '../../../lib/tokens.js'
import type { UserRecord } from '../../../lib/store/user-store.js'

export const REFRESH_TOKEN_REFUSED = 'Invalid refresh token'

const refresh: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/api/auth/refresh', {
    schema: {
      tags: ['auth'],
      summary: 'Trade a refresh token for a new access token',
      description: 'No new refresh token is issued: log in again when the refresh token expires.',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: ref(RefreshRequest),
      response: { 200: ref(AccessTokenGrant), ...errorResponses(...commonErrors, 413, 415) }
    },
    // Before validation, so a missing or malformed token answers the contract's 400 message.
    preValidation: async (request) => {
      const token = (request.body as Record<string, unknown> | undefined)?.refresh_token
      try {
        request.user = await fastify.userForToken(token, 'refresh')
      } catch (error) {
        if (error instanceof InvalidTokenError) throw new HttpError(400, REFRESH_TOKEN_REFUSED)
        throw error
      }
    }
  }, async (request) => {
    const user = request.user as UserRecord
    await fastify.store.markSeen(user.id)
    return {
      access_token: fastify.tokens.issueAccessToken(user),
      expires_in: fastify.tokens.accessTtlSeconds
    }
  })
}

export default refresh
