import t from 'tap'
import { createDecoder, createVerifier } from 'fast-jwt'
import type { SessionId } from '../../../lib/store/session-store.js'
import { InvalidTokenError, MAX_TOKEN_LENGTH, TokenService, keyIdOf, type TokenSession, type TokenSubject } from '../../../lib/auth/tokens.js'
import { claims, forgeries, header, signedToken } from '../../support/forge.js'
import { TEST_JWT_SECRET } from '../../support/helper.js'

const OLD_SECRET = 'the-previous-secret-that-is-32-characters-or-more'
const RETIRED_SECRET = 'a-retired-secret-no-longer-listed-anywhere-at-all'

const decode = createDecoder({ complete: true })

const service = (current: string, previous: string[] = []) =>
  new TokenService({ currentSecret: current, previousSecrets: previous, accessTtlSeconds: 60 })

const SESSION_ID = 'c2Vzc2lvbi1pZC1vZi10ZQ' as SessionId
/** A session that expires `seconds` after now, on a whole second, as sessions do. */
const sessionFor = (seconds: number, nowMs = Date.now()): TokenSession => ({ id: SESSION_ID, expiresAt: Math.ceil((nowMs + seconds * 1000) / 1000) * 1000 })
const access = (tokens: TokenService, subject: TokenSubject, session = sessionFor(600)) => tokens.accessGrant(subject, session).access_token

t.test('issued tokens verify for their own use only', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  const accessToken = access(tokens, { id: 7, tokenVersion: 3 })
  const refresh = tokens.issueRefreshToken({ id: 7, tokenVersion: 3 }, sessionFor(600))
  t.match(tokens.verify(accessToken, 'access'), { userId: 7, tokenVersion: 3, sessionId: SESSION_ID, use: 'access', expiresAtSeconds: Number })
  t.match(tokens.verify(refresh, 'refresh'), { userId: 7, tokenVersion: 3, sessionId: SESSION_ID, use: 'refresh', expiresAtSeconds: Number })
  t.throws(() => tokens.verify(accessToken, 'refresh'), InvalidTokenError, 'a token verified before is still refused for the other use')
  t.throws(() => tokens.verify(refresh, 'access'), InvalidTokenError)
})

t.test('a token verified before is refused once it expires', async (t) => {
  const tokens = new TokenService({ currentSecret: TEST_JWT_SECRET, previousSecrets: [], accessTtlSeconds: 1 })
  const accessToken = access(tokens, { id: 7, tokenVersion: 3 })
  t.match(tokens.verify(accessToken, 'access'), { userId: 7 })
  await new Promise((resolve) => setTimeout(resolve, 2100))
  t.throws(() => tokens.verify(accessToken, 'access'), InvalidTokenError)
})

t.test('tokens carry the header and claims the verifier pins', async (t) => {
  const token = access(service(TEST_JWT_SECRET), { id: 7, tokenVersion: 0 })
  const decoded = decode(token)
  t.match(decoded.header, { alg: 'HS256', kid: keyIdOf(TEST_JWT_SECRET) })
  t.match(decoded.payload, { sub: '7', token_use: 'access', ver: 0, sid: SESSION_ID, iss: 'meridian', aud: 'meridian-api' })
})

t.test('a token lives at least its TTL (the `expires_in` answered), wherever in the second it is issued', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  let nowMs = 0
  t.capture(Date, 'now', () => nowMs)
  for (nowMs of [1_800_000_000_000, 1_800_000_000_001, 1_800_000_000_999]) {
    const session = sessionFor(600, nowMs)
    const grant = tokens.accessGrant({ id: 7, tokenVersion: 0 }, session)
    t.equal(grant.expires_in, 60, `issued at ${nowMs} ms: expires_in is the access TTL`)
    for (const [use, token, ttl] of [['access', grant.access_token, 60], ['refresh', tokens.issueRefreshToken({ id: 7, tokenVersion: 0 }, session), 600]] as const) {
      const { iat, exp } = decode(token).payload
      t.equal(iat, Math.floor(nowMs / 1000), `${use} issued at ${nowMs} ms: iat is the second it was issued in`)
      t.ok(exp * 1000 >= nowMs + ttl * 1000, `${use} issued at ${nowMs} ms: valid for at least ${ttl} s (exp ${exp})`)
      t.ok(exp * 1000 < nowMs + (ttl + 1) * 1000, `${use} issued at ${nowMs} ms: and for less than ${ttl + 1} s`)
    }
  }
})

t.test('an access token never outlives its session, and its expires_in says so', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  let nowMs = 1_800_000_000_400
  t.capture(Date, 'now', () => nowMs)
  const session = sessionFor(90, nowMs)
  nowMs += 50_000
  const grant = tokens.accessGrant({ id: 7, tokenVersion: 0 }, session)
  t.equal(decode(grant.access_token).payload.exp, session.expiresAt / 1000, 'the access token expires with the session, not 60 s later')
  t.equal(grant.expires_in, 40, 'and expires_in is the whole seconds left')
  t.equal(decode(tokens.issueRefreshToken({ id: 7, tokenVersion: 0 }, session)).payload.exp, session.expiresAt / 1000, 'the refresh token expires with the session')
})

t.test('tokens issued before sessions: an access token verifies without a session, a refresh token is refused', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  const legacyAccess = signedToken(header(), claims(7, 'access', { sid: undefined }))
  const legacyRefresh = signedToken(header(), claims(7, 'refresh', { sid: undefined }))
  t.match(tokens.verify(legacyAccess, 'access'), { userId: 7, sessionId: null })
  t.throws(() => tokens.verify(legacyRefresh, 'refresh'), { message: 'issued before sessions' })
  for (const sid of [42, '', 'short', 'x'.repeat(23), 'not/base64url+padding=']) {
    t.throws(() => tokens.verify(signedToken(header(), claims(7, 'access', { sid })), 'access'), { message: 'bad session id' }, `sid ${JSON.stringify(sid)}`)
  }
})

t.test('tokens verify with a stock HS256 verifier, and fail it under any other key', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  const stock = (key: string) => createVerifier({ key, algorithms: ['HS256'], allowedIss: 'meridian', allowedAud: 'meridian-api' })
  const now = Math.floor(Date.now() / 1000)
  for (const [use, token, ttl] of [['access', access(tokens, { id: 42, tokenVersion: 5 }), 60], ['refresh', tokens.issueRefreshToken({ id: 42, tokenVersion: 5 }, sessionFor(600)), 600]] as const) {
    const claims = stock(TEST_JWT_SECRET)(token) as Record<string, unknown>
    t.match(claims, { sub: '42', token_use: use, ver: 5, iss: 'meridian', aud: 'meridian-api' }, use)
    t.ok(Math.abs((claims.iat as number) - now) <= 1, `${use}: iat is now`)
    t.ok([ttl, ttl + 1].includes((claims.exp as number) - (claims.iat as number)), `${use}: exp is the TTL after iat, rounded up`)
    t.throws(() => stock(OLD_SECRET)(token), `${use}: refused under another key`)
  }
})

t.test('every forgery is refused', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  for (const use of ['access', 'refresh'] as const) {
    for (const [attack, token] of Object.entries(forgeries(1, use))) {
      // Valid signatures: the user and session checks refuse them (route tests).
      if (attack === 'stale token version' || attack === 'session of no one') continue
      t.throws(() => tokens.verify(token, use), InvalidTokenError, `${use}: ${attack}`)
    }
  }
})

t.test('an oversized token is refused before any decoding', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  t.throws(() => tokens.verify('a'.repeat(MAX_TOKEN_LENGTH + 1), 'access'), { message: 'missing or oversized token' })
  t.throws(() => tokens.verify(undefined, 'access'), { message: 'missing or oversized token' })
  t.throws(() => tokens.verify(['a', 'b'], 'access'), { message: 'missing or oversized token' })
})

t.test('key rotation: old tokens verify until retired, new tokens use the new key', async (t) => {
  const before = service(OLD_SECRET)
  const oldToken = access(before, { id: 1, tokenVersion: 0 })
  const retiredToken = access(service(RETIRED_SECRET), { id: 1, tokenVersion: 0 })

  const after = service(TEST_JWT_SECRET, [OLD_SECRET])
  t.equal(after.verify(oldToken, 'access').userId, 1, 'a token of the previous key still works')
  t.throws(() => after.verify(retiredToken, 'access'), InvalidTokenError, 'a retired key is refused')
  const newToken = access(after, { id: 1, tokenVersion: 0 })
  t.equal(decode(newToken).header.kid, keyIdOf(TEST_JWT_SECRET))
  t.throws(() => before.verify(newToken, 'access'), InvalidTokenError, 'the new key is unknown to a replica not yet rotated')

  const finished = service(TEST_JWT_SECRET)
  t.throws(() => finished.verify(oldToken, 'access'), InvalidTokenError, 'once the old key is dropped its tokens stop working')
})
