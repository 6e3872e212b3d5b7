import { randomBytes } from 'node:crypto'
import t from 'tap'
import { MemoryFailureCounter } from '../../lib/failure-counter.js'
import { addUser, build } from '../helper.js'

t.test('memory counter: a window starts at the first failure and ends', async (t) => {
  let now = 1_000_000
  const counter = new MemoryFailureCounter(60_000, () => now)
  t.teardown(async () => { await counter.close() })
  t.same(await counter.get('k'), { failures: 0, retryAfterSeconds: 0 })
  await counter.record('k')
  now += 10_000
  await counter.record('k')
  t.same(await counter.get('k'), { failures: 2, retryAfterSeconds: 50 })
  now += 50_000
  t.same(await counter.get('k'), { failures: 0, retryAfterSeconds: 0 }, 'the window ended')
  await counter.record('k')
  t.same(await counter.get('k'), { failures: 1, retryAfterSeconds: 60 }, 'a new window')
  await counter.reset('k')
  t.same(await counter.get('k'), { failures: 0, retryAfterSeconds: 0 })
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
