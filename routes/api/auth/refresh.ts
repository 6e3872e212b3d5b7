import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccessTokenGrant, RefreshRequest } from '../../../schemas/auth.js'
import { apiErrors, bodyErrors, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { HttpError } from '../../../lib/http/errors.js'

const REFRESH_TOKEN_REFUSED = 'Invalid refresh token'

const refresh: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/api/auth/refresh', {
    config: { fairShare: 'request' },
    schema: {
      tags: ['auth'],
      operationId: 'refreshToken',
      security: [],
      summary: 'Trade a refresh token for a new access token',
      description: 'No new refresh token is issued: log in again when the refresh token expires. The access token ' +
        'belongs to the refresh token\'s session and never outlives it. A refresh token of a session that has ended ' +
        '(logout, a password change) is refused.',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: ref(RefreshRequest),
      response: {
        200: ref(AccessTokenGrant, withRateLimitHeaders),
        ...errorResponses([...apiErrors, ...bodyErrors], { 400: REFRESH_TOKEN_REFUSED })
      }
    },
    preValidation: [
      fastify.tokenGuard('refresh',
        (request) => (request.body as Record<string, unknown> | undefined)?.refresh_token,
        () => new HttpError(400, REFRESH_TOKEN_REFUSED)),
      fastify.recordActivity
    ]
  }, async (request) => {
    const { user, session } = request
    if (user === null || session === null) {
      throw new Error('the refresh token guard let a request through without a user or session')
    }
    return fastify.tokens.accessGrant(user, session)
  })
}

export default refresh
