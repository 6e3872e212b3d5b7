import t from 'tap'
import argon2 from 'argon2'
import { addUser, build } from '../../../support/helper.js'
import { needsRehash } from '../../../../lib/auth/passwords.js'
import { ConfigSchema } from '../../../../config.js'

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString()
})

t.test('a form-encoded login answers both tokens and expires_in (CONTRACT A1)', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', ...form({ username: 'ada', password: 'correct horse' }) })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token'])
  t.type(body.access_token, 'string')
  t.type(body.refresh_token, 'string')
  t.not(body.access_token, body.refresh_token)
  t.equal(body.expires_in, 3600, 'default access-token lifetime')
  t.ok(Number.isInteger(body.expires_in))
})

t.test('a JSON login works the same (CONTRACT B Tokens)', async (t) => {
  const app = await build(t, { ACCESS_TOKEN_TTL: '120' })
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'correct horse' } })
  t.equal(response.statusCode, 200)
  t.equal(response.json().expires_in, 120, 'expires_in follows ACCESS_TOKEN_TTL')
})

t.test('wrong password and unknown user answer the same 403 (no user enumeration)', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const wrongPassword = await app.inject({ method: 'POST', url: '/api/auth/login', ...form({ username: 'ada', password: 'nope' }) })
  const unknownUser = await app.inject({ method: 'POST', url: '/api/auth/login', ...form({ username: 'nobody', password: 'nope' }) })
  for (const response of [wrongPassword, unknownUser]) {
    t.equal(response.statusCode, 403)
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
    t.same(response.json(), { error: { code: 403, message: 'Invalid credentials' } })
    t.equal(response.headers['cache-control'], 'no-store')
  }
  t.equal(wrongPassword.body, unknownUser.body, 'byte-identical bodies')
})

t.test('a missing field is a validation failure naming the field', async (t) => {
  const app = await build(t)
  const cases: Array<[Record<string, string>, string]> = [
    [{ password: 'x' }, 'username'],
    [{ username: 'ada' }, 'password'],
    [{ username: '', password: 'x' }, 'username']
  ]
  for (const [fields, field] of cases) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', ...form(fields) })
    t.equal(response.statusCode, 400, JSON.stringify(fields))
    t.equal(response.json().error.code, 400)
    t.match(response.json().error.message, field)
  }
})

t.test('bodies that are neither form nor JSON answer 415, malformed JSON 400', async (t) => {
  const app = await build(t)
  const plain = await app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'username=a&password=b' })
  t.equal(plain.statusCode, 415)
  t.same(plain.json(), { error: { code: 415, message: 'Unsupported media type' } })
  const malformed = await app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"username":' })
  t.equal(malformed.statusCode, 400)
  t.same(malformed.json(), { error: { code: 400, message: 'Malformed JSON body' } })
})

t.test('failed logins per username are throttled with 429 and Retry-After', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  await addUser(app, { username: 'grace', password: 'cobol rules' })
  const attempt = async (username: string, password: string, remoteAddress: string) =>
    await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, payload: { username, password } })

  for (let i = 0; i < ConfigSchema.properties.LOGIN_MAX_FAILURES_PER_USER.default; i++) {
    // From different addresses each time: only the username counter can stop these.
    t.equal((await attempt('ada', 'guess', `10.0.0.${i + 1}`)).statusCode, 403)
  }
  const throttled = await attempt('ada', 'correct horse', '10.0.1.1')
  t.equal(throttled.statusCode, 429, 'even the right password waits once the username is throttled')
  t.same(throttled.json(), { error: { code: 429, message: 'Too many requests' } })
  const retryAfter = Number(throttled.headers['retry-after'])
  t.ok(retryAfter > 0 && retryAfter <= ConfigSchema.properties.LOGIN_FAILURE_WINDOW.default, `Retry-After ${retryAfter}`)

  const otherUser = await attempt('grace', 'cobol rules', '10.0.2.1')
  t.equal(otherUser.statusCode, 200, 'another user from another address is not blocked')
})

t.test('failed logins per client address are throttled across usernames', async (t) => {
  const app = await build(t, {}, { loginThrottle: { maxFailuresPerAddress: 3 } })
  await addUser(app, { username: 'grace', password: 'cobol rules' })
  for (let i = 0; i < 3; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.9.9.9', payload: { username: `user${i}`, password: 'x' } })
    t.equal(response.statusCode, 403)
  }
  const blocked = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.9.9.9', payload: { username: 'grace', password: 'cobol rules' } })
  t.equal(blocked.statusCode, 429)
  t.ok(Number(blocked.headers['retry-after']) > 0)
  const elsewhere = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.9.9.10', payload: { username: 'grace', password: 'cobol rules' } })
  t.equal(elsewhere.statusCode, 200)
})

t.test('X-Forwarded-For cannot escape the address throttle unless TRUST_PROXY names the proxy', async (t) => {
  t.test('TRUST_PROXY unset: the socket address counts', async (t) => {
    const app = await build(t, {}, { loginThrottle: { maxFailuresPerAddress: 2 } })
    for (let i = 0; i < 2; i++) {
      await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.1.1', headers: { 'x-forwarded-for': `192.0.2.${i}` }, payload: { username: `u${i}`, password: 'x' } })
    }
    const spoofed = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.1.1', headers: { 'x-forwarded-for': '192.0.2.99' }, payload: { username: 'u9', password: 'x' } })
    t.equal(spoofed.statusCode, 429)
  })
  t.test('TRUST_PROXY names the balancer: the forwarded client address counts', async (t) => {
    const app = await build(t, { TRUST_PROXY: '10.1.1.1' }, { loginThrottle: { maxFailuresPerAddress: 2 } })
    for (let i = 0; i < 2; i++) {
      await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.1.1', headers: { 'x-forwarded-for': '192.0.2.1' }, payload: { username: `u${i}`, password: 'x' } })
    }
    const sameClient = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.1.1', headers: { 'x-forwarded-for': '192.0.2.1' }, payload: { username: 'u9', password: 'x' } })
    t.equal(sameClient.statusCode, 429)
    const otherClient = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.1.1', headers: { 'x-forwarded-for': '192.0.2.2' }, payload: { username: 'u9', password: 'x' } })
    t.equal(otherClient.statusCode, 403)
  })
})

t.test('a login with an outdated hash rehashes it with the current parameters', async (t) => {
  const app = await build(t)
  const weakHash = await argon2.hash('old but right', { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 })
  const user = await app.database.add({ username: 'old', passwordHash: weakHash, name: 'Old', birthdate: '1970-01-01', gender: 'x', shortDesc: '' })
  t.ok(needsRehash(weakHash))
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'old', password: 'old but right' } })
  t.equal(response.statusCode, 200)
  const stored = await app.database.findById(user.id)
  t.not(stored?.passwordHash, weakHash)
  t.notOk(needsRehash(stored?.passwordHash ?? ''), 'stored hash uses the current parameters')
  t.equal(stored?.tokenVersion, user.tokenVersion, 'a rehash does not revoke tokens')
})

t.test('passwords are stored as argon2id hashes', async (t) => {
  const app = await build(t)
  const user = await addUser(app, { username: 'ada', password: 'correct horse' })
  t.match(user.passwordHash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  t.notMatch(user.passwordHash, 'correct horse')
})

t.test('JSON bodies are validated as sent, never coerced', async (t) => {
  const app = await build(t)
  await addUser(app, { username: '5', password: 'true' })
  for (const payload of [{ username: 5, password: 'true' }, { username: '5', password: true }, { username: ['5'], password: 'true' }, { username: null, password: 'true' }]) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.match(response.json().error.message, /must be string/)
  }
})
