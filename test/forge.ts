import { createHmac } from 'node:crypto'
import { keyIdOf, TOKEN_AUDIENCE, TOKEN_ISSUER } from '../lib/tokens.js'
import { TEST_JWT_SECRET } from './helper.js'

/** Tokens made by hand, the way an attacker would, to attack the verifier. */
const base64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

export function signedToken (header: Record<string, unknown>, payload: Record<string, unknown>, secret = TEST_JWT_SECRET): string {
  const signingInput = `${base64url(header)}.${base64url(payload)}`
  const algorithm = header.alg === 'HS512' ? 'sha512' : header.alg === 'HS384' ? 'sha384' : 'sha256'
  return `${signingInput}.${createHmac(algorithm, secret).update(signingInput).digest('base64url')}`
}

const ATTACKER_SECRET = 'another-secret-of-at-least-32-characters!'

export interface ClaimOverrides { [claim: string]: unknown }

/** Claims exactly like the service's own for `userId`, with overrides (undefined removes one). */
export function claims (userId: number, use: 'access' | 'refresh', overrides: ClaimOverrides = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  const all: Record<string, unknown> = {
    sub: String(userId), token_use: use, ver: 0, iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, iat: now, exp: now + 600, ...overrides
  }
  for (const [key, value] of Object.entries(all)) if (value === undefined) delete all[key]
  return all
}

export function header (secret = TEST_JWT_SECRET, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { alg: 'HS256', typ: 'JWT', kid: keyIdOf(secret), ...overrides }
}

/** Every way to forge or bend a token of `userId` for `use`, named after the attack. */
export function forgeries (userId: number, use: 'access' | 'refresh'): Record<string, string> {
  const valid = signedToken(header(), claims(userId, use))
  const [h, p] = valid.split('.') as [string, string, string]
  const now = Math.floor(Date.now() / 1000)
  const other = use === 'access' ? 'refresh' : 'access'
  return {
    'alg none': `${base64url({ alg: 'none', typ: 'JWT', kid: keyIdOf(TEST_JWT_SECRET) })}.${p}.`,
    'alg none without kid': `${base64url({ alg: 'none' })}.${p}.`,
    'signed with another key and its kid': signedToken(header(ATTACKER_SECRET), claims(userId, use), ATTACKER_SECRET),
    'signed with another key under our kid': signedToken(header(), claims(userId, use), ATTACKER_SECRET),
    'HS512 with our key (algorithm not pinned)': signedToken(header(TEST_JWT_SECRET, { alg: 'HS512' }), claims(userId, use)),
    'payload changed after signing': `${h}.${base64url(claims(userId + 1, use))}.${valid.split('.')[2] as string}`,
    'no exp': signedToken(header(), claims(userId, use, { exp: undefined })),
    expired: signedToken(header(), claims(userId, use, { iat: now - 7200, exp: now - 3600 })),
    'not yet valid': signedToken(header(), claims(userId, use, { nbf: now + 3600 })),
    'wrong issuer': signedToken(header(), claims(userId, use, { iss: 'someone-else' })),
    'wrong audience': signedToken(header(), claims(userId, use, { aud: 'another-api' })),
    [`${other} token used as ${use}`]: signedToken(header(), claims(userId, other)),
    'no token_use': signedToken(header(), claims(userId, use, { token_use: undefined })),
    'unknown kid': signedToken(header(TEST_JWT_SECRET, { kid: 'retired-key' }), claims(userId, use)),
    'stale token version': signedToken(header(), claims(userId, use, { ver: -1 })),
    'non-numeric subject': signedToken(header(), claims(userId, use, { sub: 'admin' })),
    garbage: 'not.a.token',
    'empty string': '',
    oversized: signedToken(header(), claims(userId, use, { pad: 'x'.repeat(5000) }))
  }
}
