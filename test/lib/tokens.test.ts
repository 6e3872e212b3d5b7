import t from 'tap'
import { createDecoder, createVerifier } from 'fast-jwt'
import { InvalidTokenError, MAX_TOKEN_LENGTH, TokenService, keyIdOf } from '../../lib/tokens.js'
import { forgeries } from '../forge.js'
import { TEST_JWT_SECRET } from '../helper.js'

const OLD_SECRET = 'the-previous-secret-that-is-32-characters-or-more'
const RETIRED_SECRET = 'a-retired-secret-no-longer-listed-anywhere-at-all'

const decode = createDecoder({ complete: true })

const service = (current: string, previous: string[] = []) =>
  new TokenService({ currentSecret: current, previousSecrets: previous, accessTtlSeconds: 60, refreshTtlSeconds: 600 })

t.test('issued tokens verify for their own use only', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  const access = tokens.issueAccessToken({ id: 7, tokenVersion: 3 })
  const refresh = tokens.issueRefreshToken({ id: 7, tokenVersion: 3 })
  t.match(tokens.verify(access, 'access'), { userId: 7, tokenVersion: 3, use: 'access', expiresAtSeconds: Number })
  t.match(tokens.verify(refresh, 'refresh'), { userId: 7, tokenVersion: 3, use: 'refresh', expiresAtSeconds: Number })
  t.throws(() => tokens.verify(access, 'refresh'), InvalidTokenError, 'a token verified before is still refused for the other use')
  t.throws(() => tokens.verify(refresh, 'access'), InvalidTokenError)
})

t.test('a token verified before is refused once it expires', async (t) => {
  const tokens = new TokenService({ currentSecret: TEST_JWT_SECRET, previousSecrets: [], accessTtlSeconds: 1, refreshTtlSeconds: 1 })
  const access = tokens.issueAccessToken({ id: 7, tokenVersion: 3 })
  t.match(tokens.verify(access, 'access'), { userId: 7 })
  await new Promise((resolve) => setTimeout(resolve, 2100))
  t.throws(() => tokens.verify(access, 'access'), InvalidTokenError)
})

t.test('tokens carry the header and claims the verifier pins', async (t) => {
  const token = service(TEST_JWT_SECRET).issueAccessToken({ id: 7, tokenVersion: 0 })
  const { header, payload } = decode(token)
  t.match(header, { alg: 'HS256', kid: keyIdOf(TEST_JWT_SECRET) })
  t.match(payload, { sub: '7', token_use: 'access', ver: 0, iss: 'meridian', aud: 'meridian-api' })
})

t.test('a token lives at least its TTL (the `expires_in` answered), wherever in the second it is issued', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  let nowMs = 0
  t.capture(Date, 'now', () => nowMs)
  for (nowMs of [1_800_000_000_000, 1_800_000_000_001, 1_800_000_000_999]) {
    for (const [use, token, ttl] of [['access', tokens.issueAccessToken({ id: 7, tokenVersion: 0 }), 60], ['refresh', tokens.issueRefreshToken({ id: 7, tokenVersion: 0 }), 600]] as const) {
      const { iat, exp } = decode(token).payload
      t.equal(iat, Math.floor(nowMs / 1000), `${use} issued at ${nowMs} ms: iat is the second it was issued in`)
      t.ok(exp * 1000 >= nowMs + ttl * 1000, `${use} issued at ${nowMs} ms: valid for at least ${ttl} s (exp ${exp})`)
      t.ok(exp * 1000 < nowMs + (ttl + 1) * 1000, `${use} issued at ${nowMs} ms: and for less than ${ttl + 1} s`)
    }
  }
})

t.test('tokens verify with a stock HS256 verifier, and fail it under any other key', async (t) => {
  const tokens = service(TEST_JWT_SECRET)
  const stock = (key: string) => createVerifier({ key, algorithms: ['HS256'], allowedIss: 'meridian', allowedAud: 'meridian-api' })
  const now = Math.floor(Date.now() / 1000)
  for (const [use, token, ttl] of [['access', tokens.issueAccessToken({ id: 42, tokenVersion: 5 }), 60], ['refresh', tokens.issueRefreshToken({ id: 42, tokenVersion: 5 }), 600]] as const) {
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
      if (attack === 'stale token version') continue // a valid signature: the user check refuses it (route tests)
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
  const oldToken = before.issueAccessToken({ id: 1, tokenVersion: 0 })
  const retiredToken = service(RETIRED_SECRET).issueAccessToken({ id: 1, tokenVersion: 0 })

  const after = service(TEST_JWT_SECRET, [OLD_SECRET])
  t.equal(after.verify(oldToken, 'access').userId, 1, 'a token of the previous key still works')
  t.throws(() => after.verify(retiredToken, 'access'), InvalidTokenError, 'a retired key is refused')
  const newToken = after.issueAccessToken({ id: 1, tokenVersion: 0 })
  t.equal(decode(newToken).header.kid, keyIdOf(TEST_JWT_SECRET))
  t.throws(() => before.verify(newToken, 'access'), InvalidTokenError, 'the new key is unknown to a replica not yet rotated')

  const finished = service(TEST_JWT_SECRET)
  t.throws(() => finished.verify(oldToken, 'access'), InvalidTokenError, 'once the old key is dropped its tokens stop working')
})
