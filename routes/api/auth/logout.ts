import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { RefreshRequest } from '../../../schemas/auth.js'
import { apiErrors, bodyErrors, errorResponses, ref, Status, withRateLimitHeaders } from '../../../schemas/common.js'
import { InvalidTokenError, type VerifiedToken } from '../../../lib/auth/tokens.js'

const logout: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/api/auth/logout', {
    config: { fairShare: 'request' },
    schema: {
      tags: ['auth'],
      operationId: 'logout',
      security: [],
      summary: 'End the session of a refresh token',
      description: 'From then on, on every replica within a second, the session\'s refresh token is refused (400) ' +
        'and so are the access tokens issued in it (403); the user\'s other sessions go on. As RFC 7009 asks, a ' +
        'token that has already ended, has expired or is not one of ours gets the same answer, so the answer says ' +
        'nothing about which tokens exist.',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: ref(RefreshRequest),
      response: {
        200: ref(Status, withRateLimitHeaders),
        ...errorResponses([...apiErrors, ...bodyErrors], { 400: 'refresh_token is required' })
      }
    }
  }, async (request) => {
    let token: VerifiedToken
    try {
      token = fastify.tokens.verify(request.body.refresh_token, 'refresh')
    } catch (error) {
      if (error instanceof InvalidTokenError) return { status: 'ok' as const }
      throw error
    }
    // Every refresh token that verifies has a session (lib/auth/tokens.ts).
    if (token.sessionId !== null) await fastify.sessions.end(token.sessionId, token.userId, 'logout')
    return { status: 'ok' as const }
  })
}

export default logout
