import { createHmac } from 'node:crypto'
import { keyIdOf, TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../lib/auth/tokens.js'
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

/** A session id of the right shape that no session has. */
export const FORGED_SESSION_ID = Buffer.from('forged-session-i').toString('base64url')

/** The session id a token of the service carries (its `sid` claim), read without verifying it. */
export function sessionIdOf (token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sid?: unknown }
  if (typeof payload.sid !== 'string') throw new Error('the token has no session id')
  return payload.sid
}

/** Claims exactly like the service's own for `userId`, with overrides (undefined removes one). */
export function claims (userId: number, use: 'access' | 'refresh', overrides: ClaimOverrides = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  const all: Record<string, unknown> = {
    sub: String(userId), token_use: use, ver: 0, sid: FORGED_SESSION_ID, iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, iat: now, exp: now + 600, ...overrides
  }
  for (const [key, value] of Object.entries(all)) if (value === undefined) delete all[key]
  return all
}

export function header (secret = TEST_JWT_SECRET, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { alg: 'HS256', typ: 'JWT', kid: keyIdOf(secret), ...overrides }
}

/**
 * Every way to forge or bend a token of `userId` for `use`, named after the attack. With the id
 * of one of the user's open sessions, each is refused for its attack alone.
 */
export function forgeries (userId: number, use: 'access' | 'refresh', sessionId = FORGED_SESSION_ID): Record<string, string> {
  const bent = (id: number, tokenUse: 'access' | 'refresh', overrides: ClaimOverrides = {}) => claims(id, tokenUse, { sid: sessionId, ...overrides })
  const valid = signedToken(header(), bent(userId, use))
  const [h, p] = valid.split('.') as [string, string, string]
  const now = Math.floor(Date.now() / 1000)
  const other = use === 'access' ? 'refresh' : 'access'
  return {
    'alg none': `${base64url({ alg: 'none', typ: 'JWT', kid: keyIdOf(TEST_JWT_SECRET) })}.${p}.`,
    'alg none without kid': `${base64url({ alg: 'none' })}.${p}.`,
    'signed with another key and its kid': signedToken(header(ATTACKER_SECRET), bent(userId, use), ATTACKER_SECRET),
    'signed with another key under our kid': signedToken(header(), bent(userId, use), ATTACKER_SECRET),
    'HS512 with our key (algorithm not pinned)': signedToken(header(TEST_JWT_SECRET, { alg: 'HS512' }), bent(userId, use)),
    'payload changed after signing': `${h}.${base64url(bent(userId + 1, use))}.${valid.split('.')[2] as string}`,
    'no exp': signedToken(header(), bent(userId, use, { exp: undefined })),
    expired: signedToken(header(), bent(userId, use, { iat: now - 7200, exp: now - 3600 })),
    'not yet valid': signedToken(header(), bent(userId, use, { nbf: now + 3600 })),
    'wrong issuer': signedToken(header(), bent(userId, use, { iss: 'someone-else' })),
    'wrong audience': signedToken(header(), bent(userId, use, { aud: 'another-api' })),
    [`${other} token used as ${use}`]: signedToken(header(), bent(userId, other)),
    'no token_use': signedToken(header(), bent(userId, use, { token_use: undefined })),
    'unknown kid': signedToken(header(TEST_JWT_SECRET, { kid: 'retired-key' }), bent(userId, use)),
    'stale token version': signedToken(header(), bent(userId, use, { ver: -1 })),
    'session of no one': signedToken(header(), bent(userId, use, { sid: Buffer.from('no-such-session!').toString('base64url') })),
    'malformed session id': signedToken(header(), bent(userId, use, { sid: 'a/b' })),
    'non-numeric subject': signedToken(header(), bent(userId, use, { sub: 'admin' })),
    garbage: 'not.a.token',
    'empty string': '',
    oversized: signedToken(header(), bent(userId, use, { pad: 'x'.repeat(5000) }))
  }
}
