import { randomBytes } from 'node:crypto'
import t from 'tap'
import { MemoryFailureCounter } from '../../lib/failure-counter.js'
import { addUser, build } from '../helper.js'
import { loginThrottleDefaults } from '../../plugins/login-throttle.js'

t.test('memory counter: a window starts at the first attempt and ends', async (t) => {
  let now = 1_000_000
  const counter = new MemoryFailureCounter(60_000, () => now)
  t.teardown(async () => { await counter.close() })
  t.same(await counter.hit('k'), { attempts: 1, retryAfterSeconds: 60 })
  now += 10_000
  t.same(await counter.hit('k'), { attempts: 2, retryAfterSeconds: 50 })
  await counter.release('k')
  t.same(await counter.hit('k'), { attempts: 2, retryAfterSeconds: 50 }, 'a released attempt no longer counts')
  now += 50_000
  t.same(await counter.hit('k'), { attempts: 1, retryAfterSeconds: 60 }, 'the window ended: a new one starts')
  await counter.reset('k')
  t.same(await counter.hit('k'), { attempts: 1, retryAfterSeconds: 60 })
  await counter.release('other')
  t.same(await counter.hit('other'), { attempts: 1, retryAfterSeconds: 60 }, 'releasing an unknown key does nothing')
})

t.test('a burst of concurrent guesses cannot pass the limit together', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'right' })
  const statuses = await Promise.all(Array.from({ length: 30 }, async (_, i) =>
    (await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: `10.4.0.${i}`, payload: { username: 'ada', password: `guess-${i}` } })).statusCode))
  t.equal(statuses.filter((status) => status === 403).length, loginThrottleDefaults.maxFailuresPerUsername, 'only the allowed number of passwords was checked')
  t.equal(statuses.filter((status) => status === 429).length, 30 - loginThrottleDefaults.maxFailuresPerUsername)
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
  const findByUsername = app.store.findByUsername
  app.store.findByUsername = async () => { throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }) }
  for (let i = 0; i < 5; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
    t.equal(response.statusCode, 503, `login ${i + 1} during the outage`)
  }
  app.store.findByUsername = findByUsername
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
  t.equal(response.statusCode, 200, 'the outage locked nobody out')
})

const redisUrl = process.env.TEST_REDIS_URL
t.test('Redis: failures on one replica throttle the others', { skip: redisUrl === undefined ? 'Redis tests skipped: set TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run them' : false }, async (t) => {
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
