import { Type, type Static } from '@sinclair/typebox'
import { Int32 } from './common.js'

export const LoginRequest = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 1024 })
}, { $id: 'LoginRequest', description: 'Form-encoded or JSON' })
export type LoginRequest = Static<typeof LoginRequest>

export const RefreshRequest = Type.Object({
  refresh_token: Type.String({ description: 'Refresh token from /api/auth/login' })
}, { $id: 'RefreshRequest', description: 'Form-encoded or JSON' })
export type RefreshRequest = Static<typeof RefreshRequest>

const AccessToken = Type.String({ description: 'Send as the access_token query parameter' })
const ExpiresIn = Int32({ minimum: 1, description: 'Seconds until the access token expires' })

export const TokenPair = Type.Object({
  access_token: AccessToken,
  refresh_token: Type.String({ description: 'Trade for a new access token at /api/auth/refresh' }),
  expires_in: ExpiresIn
}, { $id: 'TokenPair', additionalProperties: false })

export const AccessTokenGrant = Type.Object({
  access_token: AccessToken,
  expires_in: ExpiresIn
}, { $id: 'AccessTokenGrant', additionalProperties: false })
