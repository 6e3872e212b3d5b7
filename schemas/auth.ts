import { Type, type Static } from '@sinclair/typebox'
import { Int32 } from './common.js'

// Real tokens of the demo user (`demo`, signed with a throwaway key), for the document's examples.
const EXAMPLE_ACCESS_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InBhUlg4OEdDbVVIbTBGQkMifQ.eyJzdWIiOiIxIiwidG9rZW5fdXNlIjoiYWNjZXNzIiwidmVyIjowLCJhdWQiOiJtZXJpZGlhbi1hcGkiLCJpc3MiOiJtZXJpZGlhbiIsImlhdCI6MTc5NTU1MDQzNCwiZXhwIjoxNzk1NTU0MDM0fQ.9mCxrXCyAw1s9JBZNcEsw9r14_xiE5B9kRyPWEFvdoU'
const EXAMPLE_REFRESH_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InBhUlg4OEdDbVVIbTBGQkMifQ.eyJzdWIiOiIxIiwidG9rZW5fdXNlIjoicmVmcmVzaCIsInZlciI6MCwiYXVkIjoibWVyaWRpYW4tYXBpIiwiaXNzIjoibWVyaWRpYW4iLCJpYXQiOjE3OTU1NTA0MzQsImV4cCI6MTc5ODE0MjQzNH0.zSsaQN1qoG9w8fUeHcuvP_xwi6KvQAxQwSVOo58JjXY'

export const LoginRequest = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 1024 })
}, { $id: 'LoginRequest', description: 'Form-encoded or JSON', examples: [{ username: 'demo', password: 'meridian-demo' }] })
export type LoginRequest = Static<typeof LoginRequest>

export const RefreshRequest = Type.Object({
  refresh_token: Type.String({ description: 'Refresh token from /api/auth/login' })
}, { $id: 'RefreshRequest', description: 'Form-encoded or JSON', examples: [{ refresh_token: EXAMPLE_REFRESH_TOKEN }] })
export type RefreshRequest = Static<typeof RefreshRequest>

const AccessToken = Type.String({ description: 'Send as the access_token query parameter' })
const ExpiresIn = Int32({ minimum: 1, description: 'Seconds until the access token expires' })

export const TokenPair = Type.Object({
  access_token: AccessToken,
  refresh_token: Type.String({ description: 'Trade for a new access token at /api/auth/refresh' }),
  expires_in: ExpiresIn
}, {
  $id: 'TokenPair',
  additionalProperties: false,
  examples: [{ access_token: EXAMPLE_ACCESS_TOKEN, refresh_token: EXAMPLE_REFRESH_TOKEN, expires_in: 3600 }]
})

export const AccessTokenGrant = Type.Object({
  access_token: AccessToken,
  expires_in: ExpiresIn
}, { $id: 'AccessTokenGrant', additionalProperties: false, examples: [{ access_token: EXAMPLE_ACCESS_TOKEN, expires_in: 3600 }] })
