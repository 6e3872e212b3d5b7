import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { addUser, build } from '../support/helper.js'
import { ConfigSchema } from '../../config.js'
import { Redis62StandIn } from '../support/redis-6.2.js'
import { redisSkip, redisUrl } from '../support/requirements.js'

t.test('a burst of concurrent guesses cannot pass the limit together', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'right' })
  const statuses = await Promise.all(Array.from({ length: 30 }, async (_, i) =>
    (await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: `10.4.0.${i}`, payload: { username: 'ada', password: `guess-${i}` } })).statusCode))
  t.equal(statuses.filter((status) => status === 403).length, ConfigSchema.properties.LOGIN_MAX_FAILURES_PER_USER.default, 'only the allowed number of passwords was checked')
  t.equal(statuses.filter((status) => status === 429).length, 30 - ConfigSchema.properties.LOGIN_MAX_FAILURES_PER_USER.default)
})

t.test('the limits and their window are the operator\'s settings', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES_PER_USER: '2', LOGIN_MAX_FAILURES_PER_ADDRESS: '3', LOGIN_FAILURE_WINDOW: '120' })
  await addUser(app, { username: 'ada', password: 'right' })
  await addUser(app, { username: 'bob', password: 'right' })
  const guess = async (username: string, remoteAddress: string) => await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, payload: { username, password: 'wrong' } })
  const perUser = [await guess('ada', '10.6.0.1'), await guess('ada', '10.6.0.2'), await guess('ada', '10.6.0.3')]
  t.same(perUser.map((answer) => answer.statusCode), [403, 403, 429], 'LOGIN_MAX_FAILURES_PER_USER=2: the third guess at one user is refused unchecked')
  const retryAfter = Number(perUser[2]!.headers['retry-after'])
  t.ok(retryAfter > 60 && retryAfter <= 120, `within LOGIN_FAILURE_WINDOW=120 (Retry-After ${retryAfter})`)
  const perAddress = [await guess('bob', '10.6.1.1'), await guess(`nobody-${1}`, '10.6.1.1'), await guess(`nobody-${2}`, '10.6.1.1'), await guess('nobody-3', '10.6.1.1')]
  t.same(perAddress.map((answer) => answer.statusCode), [403, 403, 403, 429], 'LOGIN_MAX_FAILURES_PER_ADDRESS=3: the fourth guess from one address is refused')
})

t.test('successful logins do not use up the address allowance', async (t) => {
  const app = await build(t, {}, { loginThrottle: { maxFailuresPerAddress: 3 } })
  await addUser(app, { username: 'ada', password: 'right' })
  for (let i = 0; i < 6; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.5.0.1', payload: { username: 'ada', password: 'right' } })
    t.equal(response.statusCode, 200, `login ${i + 1}`)
  }
})

t.test('logins the database could not check do not count as failures', async (t) => {
  const app = await build(t, {}, { loginThrottle: { maxFailuresPerUsername: 2, maxFailuresPerAddress: 2 } })
  await addUser(app, { username: 'ada', password: 'right' })
  const findByUsername = app.database.findByUsername
  app.database.findByUsername = async () => { throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }) }
  for (let i = 0; i < 5; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
    t.equal(response.statusCode, 503, `login ${i + 1} during the outage`)
  }
  app.database.findByUsername = findByUsername
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
  t.equal(response.statusCode, 200, 'the outage locked nobody out')
})

const skip = redisSkip()

t.test('Redis: failures on one replica throttle the others', { skip }, async (t) => {
  const env = { REDIS_URL: redisUrl as string }
  const username = `victim-${randomBytes(4).toString('hex')}`
  const replicaA = await build(t, env, { loginThrottle: { maxFailuresPerUsername: 3 } })
  const replicaB = await build(t, env, { loginThrottle: { maxFailuresPerUsername: 3 } })
  await addUser(replicaB, { username, password: 'right' })
  for (let i = 0; i < 3; i++) {
    const response = await replicaA.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: `10.3.0.${i}`, payload: { username, password: 'wrong' } })
    t.equal(response.statusCode, 403)
  }
  const burst = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    (await (i % 2 === 0 ? replicaA : replicaB).inject({ method: 'POST', url: '/api/auth/login', remoteAddress: `10.3.2.${i}`, payload: { username: `${username}-burst`, password: 'wrong' } })).statusCode))
  t.equal(burst.filter((status) => status === 403).length, 3, 'a burst spread over both replicas checks only the allowed number of passwords')
  const onB = await replicaB.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.3.1.1', payload: { username, password: 'right' } })
  t.equal(onB.statusCode, 429, 'the other replica sees the failures')
  t.ok(Number(onB.headers['retry-after']) > 0)
})

t.test('Redis unreachable: logins answer 503, never let guesses through', async (t) => {
  const app = await build(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  await addUser(app, { username: 'ada', password: 'right' })
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
  t.equal(response.statusCode, 503)
  t.same(response.json(), { error: { code: 503, message: 'Service unavailable' } })
})

async function redis62 (t: Test): Promise<Redis62StandIn> {
  const standIn = await Redis62StandIn.start(redisUrl as string)
  t.teardown(async () => { await standIn.close() })
  return standIn
}

t.test('the Redis 6.2 stand-in refuses what 6.2 lacks, as 6.2 does', { skip }, async (t) => {
  const standIn = await redis62(t)
  const redis = new Redis(standIn.url, { maxRetriesPerRequest: 1 })
  t.teardown(() => { redis.disconnect() })
  const key = `meridian:test:${randomBytes(4).toString('hex')}`
  t.equal(await redis.incr(key), 1, 'commands 6.2 has pass through')
  t.equal(await redis.pexpire(key, 60_000), 1)
  await t.rejects(redis.pexpire(key, 60_000, 'NX'), { message: "ERR wrong number of arguments for 'pexpire' command" })
  await t.rejects(redis.call('expiretime', key), { message: `ERR unknown command \`expiretime\`, with args beginning with: \`${key}\`, ` })
  const transaction = redis.multi().incr(key).pexpire(key, 60_000, 'NX').pttl(key).exec()
  await t.rejects(transaction, { message: 'EXECABORT Transaction discarded because of previous errors.' }, 'a transaction with such a command does nothing')
  t.equal(await redis.get(key), '1', 'the transaction\'s INCR did not run')
  t.equal(await redis.del(key), 1, 'and the connection goes on in order')
})

t.test('Redis 6.2: the throttle counts failures in windows that end', { skip }, async (t) => {
  const standIn = await redis62(t)
  const username = `victim-${randomBytes(4).toString('hex')}`
  const app = await build(t, { REDIS_URL: standIn.url }, { loginThrottle: { maxFailuresPerUsername: 2, windowSeconds: 60 } })
  await addUser(app, { username, password: 'right' })
  const attempt = async (password: string) => await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } })
  t.equal((await attempt('right')).statusCode, 200, 'a login works')
  t.equal((await attempt('wrong')).statusCode, 403)
  t.equal((await attempt('wrong')).statusCode, 403)
  const throttled = await attempt('right')
  t.equal(throttled.statusCode, 429, 'past the limit')
  t.ok(Number(throttled.headers['retry-after']) > 0 && Number(throttled.headers['retry-after']) <= 60, `Retry-After ${String(throttled.headers['retry-after'])}`)
  const redis = new Redis(redisUrl as string)
  t.teardown(() => { redis.disconnect() })
  const ttl = await redis.pttl(`meridian:login-attempts:v2:user:${username}`)
  t.ok(ttl > 0 && ttl <= 60_000, `the window ends: ${ttl} ms left`)
  t.same(standIn.refused, [], 'the throttle sent nothing Redis 6.2 refuses')
})

t.test('a Redis that refuses the throttle\'s commands: logins answer 503 with its error logged, leave no count behind, readiness stays 200', { skip }, async (t) => {
  const username = `victim-${randomBytes(4).toString('hex')}`
  const redis = new Redis(redisUrl as string)
  t.teardown(async () => { await redis.del(`meridian:login-attempts:v2:user:${username}`); redis.disconnect() })
  // A key of the wrong type: Redis answers every attempt on it with an error, as an unsupported command would be.
  await redis.set(`meridian:login-attempts:v2:user:${username}`, 'x')
  const lines: Array<{ level: number, msg: string, err?: { message: string } }> = []
  const logStream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    }
  })
  const app = await build(t, { REDIS_URL: redisUrl as string, LOG_LEVEL: 'info' }, { logStream, loginThrottle: { maxFailuresPerAddress: 1 } })
  await addUser(app, { username, password: 'right' })
  await addUser(app, { username: `${username}-other`, password: 'right' })
  const remoteAddress = `10.6.${randomBytes(2).join('.')}`
  const login = async (name: string) => await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, payload: { username: name, password: 'right' } })
  const response = await login(username)
  t.same([response.statusCode, response.json()], [503, { error: { code: 503, message: 'Service unavailable' } }])
  const refusal = lines.find((line) => line.msg === 'login throttle store refused a command')
  t.equal(refusal?.level, 50, 'an error line')
  t.match(refusal?.err?.message, /^WRONGTYPE /, 'with what Redis answered')
  t.equal((await login(`${username}-other`)).statusCode, 200, 'the refused login left no count on its address')
  t.equal((await app.inject('/health/ready')).statusCode, 200, 'readiness stays 200: every replica shares the one Redis')
})

t.test('an attempt refused with 429 counts against neither the username nor the address', async (t) => {
  const app = await build(t, {}, { loginThrottle: { maxFailuresPerUsername: 2, maxFailuresPerAddress: 3 } })
  const guess = async (username: string) => (await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: 'a wrong guess' } })).statusCode
  t.same([await guess('ada'), await guess('ada'), await guess('ada')], [403, 403, 429], 'the username\'s limit')
  // Two failures on the address so far: the refused third attempt was never checked.
  t.equal(await guess('grace'), 403, 'the address still has a failure left')
  t.equal(await guess('grace'), 429, 'and then none')
})
