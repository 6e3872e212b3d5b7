import { createHash } from 'node:crypto'
import { createDecoder, createSigner, createVerifier } from 'fast-jwt'
import { LRUCache } from 'lru-cache'
import type { SessionId } from '../store/session-store.js'

declare const tokenBrand: unique symbol
/** Distinct types, so a refresh token cannot be passed where an access token is meant. */
export type AccessToken = string & { readonly [tokenBrand]: 'access' }
export type RefreshToken = string & { readonly [tokenBrand]: 'refresh' }
export type TokenUse = 'access' | 'refresh'

export const TOKEN_ISSUER = 'meridian'
export const TOKEN_AUDIENCE = 'meridian-api'
const TOKEN_ALGORITHM = 'HS256'
/** Far above any token we issue; longer ones are refused before they are decoded. */
export const MAX_TOKEN_LENGTH = 2048

export interface TokenSubject { id: number, tokenVersion: number }
/** `expiresAt`: UNIX ms, a whole second; its refresh token's `exp`. */
export interface TokenSession { id: SessionId, expiresAt: number }

/** `sessionId` is null only for an access token from before sessions (docs/decisions.md, "Sessions and logout"). */
export interface VerifiedToken {
  userId: number
  tokenVersion: number
  sessionId: SessionId | null
  use: TokenUse
  expiresAtSeconds: number
}

export interface AccessGrant { access_token: AccessToken, expires_in: number }

const SESSION_ID = /^[A-Za-z0-9_-]{22}$/

/** Re-checking a signature costs more than the rest of a token check; revocation is still checked per request. */
const MAX_REMEMBERED_TOKENS = 10_000

export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError'
}

export interface TokenServiceOptions {
  currentSecret: string
  previousSecrets: readonly string[]
  accessTtlSeconds: number
}

/** Public and stable: tokens carry it as `kid` so the verifier picks the key. */
export function keyIdOf (secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 16)
}

export class TokenService {
  private readonly signer: (claims: Record<string, string | number>) => string
  private readonly verifierByKeyId: Map<string, (token: string) => Record<string, unknown>>
  private readonly decodeHeader = createDecoder({ complete: true })
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: MAX_REMEMBERED_TOKENS })
  private readonly accessTtlSeconds: number

  constructor (options: TokenServiceOptions) {
    this.accessTtlSeconds = options.accessTtlSeconds
    // Every claim is ours: fast-jwt keeps the iat and exp given (exp is rounded up below).
    this.signer = createSigner({
      key: options.currentSecret,
      algorithm: TOKEN_ALGORITHM,
      kid: keyIdOf(options.currentSecret)
    })
    this.verifierByKeyId = new Map([options.currentSecret, ...options.previousSecrets].map((secret) => [
      keyIdOf(secret),
      createVerifier({
        key: secret,
        // Pinned: the token's own `alg` header is never trusted to choose the algorithm.
        algorithms: [TOKEN_ALGORITHM],
        allowedIss: TOKEN_ISSUER,
        allowedAud: TOKEN_AUDIENCE,
        requiredClaims: ['iss', 'aud', 'sub', 'iat', 'exp', 'token_use', 'ver']
      })
    ]))
  }

  /** `expires_in` is the access TTL, or less: a token never outlives its session. */
  accessGrant (subject: TokenSubject, session: TokenSession): AccessGrant {
    const nowMs = Date.now()
    // Rounded up, so the token lives at least the promised `expires_in`; `iat` + TTL could end a second early.
    const expiresAtSeconds = Math.min(
      Math.ceil((nowMs + this.accessTtlSeconds * 1000) / 1000),
      session.expiresAt / 1000
    )
    return {
      access_token: this.sign('access', subject, session, nowMs, expiresAtSeconds) as AccessToken,
      // At least 1, as the schema says: a session with under a second left is refused at its next use.
      expires_in: Math.max(1, Math.floor((expiresAtSeconds * 1000 - nowMs) / 1000))
    }
  }

  issueRefreshToken (subject: TokenSubject, session: TokenSession): RefreshToken {
    return this.sign('refresh', subject, session, Date.now(), session.expiresAt / 1000) as RefreshToken
  }

  private sign (
    use: TokenUse,
    subject: TokenSubject,
    session: TokenSession,
    nowMs: number,
    expiresAtSeconds: number
  ): string {
    return this.signer({
      iss: TOKEN_ISSUER,
      aud: TOKEN_AUDIENCE,
      sub: String(subject.id),
      token_use: use,
      ver: subject.tokenVersion,
      sid: session.id,
      iat: Math.floor(nowMs / 1000),
      exp: expiresAtSeconds
    })
  }

  /** Checks signature, algorithm, issuer, audience, expiry and use; not yet the user. */
  verify (token: unknown, use: TokenUse): VerifiedToken {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      throw new InvalidTokenError('missing or oversized token')
    }
    const known = this.verified.get(token)
    if (known !== undefined) {
      if (known.use !== use) throw new InvalidTokenError(`not an ${use} token`)
      return known
    }
    const verified = this.verifyAfresh(token, use)
    // Expires with the token: an expired one is then checked afresh, and refused.
    this.verified.set(token, verified, { ttl: Math.max(1, verified.expiresAtSeconds * 1000 - Date.now()) })
    return verified
  }

  private verifyAfresh (token: string, use: TokenUse): VerifiedToken {
    let claims: Record<string, unknown>
    try {
      const { header } = this.decodeHeader(token) as { header: { kid?: unknown } }
      const verifier = typeof header.kid === 'string' ? this.verifierByKeyId.get(header.kid) : undefined
      if (verifier === undefined) throw new InvalidTokenError('unknown key id')
      claims = verifier(token)
    } catch (error) {
      throw error instanceof InvalidTokenError ? error : new InvalidTokenError((error as Error).message)
    }
    if (claims.token_use !== use) throw new InvalidTokenError(`not an ${use} token`)
    if (typeof claims.sub !== 'string' || !/^[1-9]\d{0,15}$/.test(claims.sub)) {
      throw new InvalidTokenError('bad subject')
    }
    const userId = Number(claims.sub)
    if (typeof claims.ver !== 'number' || !Number.isSafeInteger(claims.ver)) throw new InvalidTokenError('bad version')
    if (claims.sid !== undefined && (typeof claims.sid !== 'string' || !SESSION_ID.test(claims.sid))) {
      throw new InvalidTokenError('bad session id')
    }
    // A refresh token of no session could never be logged out of, for up to REFRESH_TOKEN_TTL.
    if (claims.sid === undefined && use === 'refresh') throw new InvalidTokenError('issued before sessions')
    return {
      userId,
      tokenVersion: claims.ver,
      sessionId: (claims.sid ?? null) as SessionId | null,
      use,
      expiresAtSeconds: claims.exp as number
    }
  }
}
