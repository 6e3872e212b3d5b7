import { Type, type Static } from '@sinclair/typebox'
import { Int32 } from './common.js'

// Real tokens of one session of the demo user (`demo`, signed with a throwaway key), for the document's examples.
const EXAMPLE_ACCESS_TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6Ikk2S01PUHlxdkxFcVV6RW4ifQ.' +
  'eyJpc3MiOiJtZXJpZGlhbiIsImF1ZCI6Im1lcmlkaWFuLWFwaSIsInN1YiI6IjEiLCJ0b2tlbl91c2UiOiJhY2Nlc3MiLCJ2ZXIi' +
  'OjAsInNpZCI6IlpqMWR6MXJEeE16aVkyRkFKbjRlWlEiLCJpYXQiOjE3OTU1NTA0MzQsImV4cCI6MTc5NTU1NDAzNH0.' +
  'fIiCSOjWxGWG9SfE6Apu0vNs4Y-nJQQzkF8uW9WUJOU'
const EXAMPLE_REFRESH_TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6Ikk2S01PUHlxdkxFcVV6RW4ifQ.' +
  'eyJpc3MiOiJtZXJpZGlhbiIsImF1ZCI6Im1lcmlkaWFuLWFwaSIsInN1YiI6IjEiLCJ0b2tlbl91c2UiOiJyZWZyZXNoIiwidmVy' +
  'IjowLCJzaWQiOiJaajFkejFyRHhNemlZMkZBSm40ZVpRIiwiaWF0IjoxNzk1NTUwNDM0LCJleHAiOjE3OTgxNDI0MzR9.' +
  'lzFm161cLdlYm0jWvmCcS-FxVIjXpnGHY58NiNRZwYM'

export const LoginRequest = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 1024 })
}, {
  $id: 'LoginRequest',
  description: 'Form-encoded or JSON',
  examples: [{ username: 'demo', password: 'meridian-demo' }]
})
export type LoginRequest = Static<typeof LoginRequest>

export const RefreshRequest = Type.Object({
  refresh_token: Type.String({ description: 'Refresh token from /api/auth/login' })
}, { $id: 'RefreshRequest', description: 'Form-encoded or JSON', examples: [{ refresh_token: EXAMPLE_REFRESH_TOKEN }] })
export type RefreshRequest = Static<typeof RefreshRequest>

const AccessToken = Type.String({ description: 'Send as the access_token query parameter' })
const ExpiresIn = Int32({ minimum: 1, description: 'Seconds until the access token expires' })

export const TokenPair = Type.Object({
  access_token: AccessToken,
  refresh_token: Type.String({
    description: 'Trade for a new access token at /api/auth/refresh; end its session at /api/auth/logout'
  }),
  expires_in: ExpiresIn
}, {
  $id: 'TokenPair',
  additionalProperties: false,
  examples: [{ access_token: EXAMPLE_ACCESS_TOKEN, refresh_token: EXAMPLE_REFRESH_TOKEN, expires_in: 3600 }]
})

export const AccessTokenGrant = Type.Object({
  access_token: AccessToken,
  expires_in: ExpiresIn
}, {
  $id: 'AccessTokenGrant',
  additionalProperties: false,
  examples: [{ access_token: EXAMPLE_ACCESS_TOKEN, expires_in: 3600 }]
})
