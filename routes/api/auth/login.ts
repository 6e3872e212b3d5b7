import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LoginRequest, TokenPair } from '../../../schemas/auth.js'
import { apiErrors, bodyErrors, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { HttpError } from '../../../lib/http/errors.js'
import {
  hashPassword,
  needsRehash,
  prepareDummyHash,
  verifyAgainstDummy,
  verifyPassword
} from '../../../lib/auth/passwords.js'

const login: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onReady', async () => { await prepareDummyHash() })

  fastify.post('/api/auth/login', {
    config: { fairShare: 'request' },
    schema: {
      tags: ['auth'],
      operationId: 'login',
      security: [],
      summary: 'Trade a username and password for an access and a refresh token',
      description: 'Starts a session: the refresh token and every access token issued from it belong to it, until ' +
        '/api/auth/logout ends it or the refresh token expires. Wrong password and unknown username answer alike. ' +
        'Repeated failures per username or per client address answer 429 with Retry-After.',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: ref(LoginRequest),
      response: {
        200: ref(TokenPair, withRateLimitHeaders),
        ...errorResponses([...apiErrors, ...bodyErrors, 403], {
          400: 'username is required',
          403: 'Invalid credentials'
        })
      }
    }
  }, async (request) => {
    const { username, password } = request.body
    await fastify.loginThrottle.attempt(request, username)

    const user = await fastify.database.findByUsername(username).catch(async (error: unknown) => {
      await fastify.loginThrottle.abandoned(request, username)
      throw error
    })
    const passwordMatches = user === undefined
      ? await verifyAgainstDummy(password)
      : await verifyPassword(user.passwordHash, password)
    if (user === undefined || !passwordMatches) {
      fastify.loginThrottle.failed(request, username)
      throw new HttpError(403, 'Invalid credentials')
    }

    await fastify.loginThrottle.succeeded(request, username)
    if (needsRehash(user.passwordHash)) {
      await fastify.database.replacePasswordHash(user.id, user.passwordHash, await hashPassword(password))
    }
    const session = await fastify.sessions.start(user.id)
    fastify.activity.seen(user.id)
    return {
      ...fastify.tokens.accessGrant(user, session),
      refresh_token: fastify.tokens.issueRefreshToken(user, session)
    }
  })
}

export default login
