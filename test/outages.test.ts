import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { addUser, build, login } from './support/helper.js'
import { postgresDatabase, postgresSkip } from './support/postgres.js'
import { redisSkip, redisUrl } from './support/requirements.js'
import { TcpProxy, type ProxyState } from './support/tcp-proxy.js'
import { SILENCE_MS } from '../lib/store/counters-feed.js'

/**
 * PostgreSQL and Redis going away under a running app, through a TCP proxy the test controls,
 * several times each way (reset connections, and a network that silently drops everything).
 * An error that escaped as an unhandled 'error' event would end this process, and the test.
 */
const skip = postgresSkip !== false ? postgresSkip : redisSkip()

const ROUNDS = Number(process.env.OUTAGE_ROUNDS ?? 3)
const SUN = '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015'

/** Polls `probe` every 100 ms until it holds; the milliseconds it took, or Infinity past `limitMs`. */
async function msUntil (probe: () => Promise<boolean>, limitMs: number): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < limitMs) {
    if (await probe()) return performance.now() - started
    await sleep(100)
  }
  return Infinity
}

async function timed (request: Promise<LightMyRequestResponse>): Promise<{ response: LightMyRequestResponse, ms: number }> {
  const started = performance.now()
  const response = await request
  return { response, ms: performance.now() - started }
}

function endpointOf (url: string): { host: string, port: number } {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: Number(parsed.port) }
}

function via (url: string, proxy: TcpProxy): string {
  const parsed = new URL(url)
  parsed.hostname = '127.0.0.1'
  parsed.port = String(proxy.port)
  return parsed.toString()
}

t.test('database and Redis outages: 503 with the error body, no crash, no hang, recovery by itself', { skip }, async (t) => {
  const databaseUrl = await postgresDatabase(t)
  const database = await TcpProxy.start(endpointOf(databaseUrl))
  const redis = await TcpProxy.start(endpointOf(redisUrl as string))
  t.teardown(async () => { await database.close(); await redis.close() })
  const redisDb = new URL(redisUrl as string)
  redisDb.pathname = '/13'
  const app: FastifyInstance = await build(t, { DATABASE_URL: via(databaseUrl, database), REDIS_URL: via(redisDb.toString(), redis) })
  await addUser(app, { username: 'outage', password: 'outage-password' })
  const { access_token: token } = await login(app, 'outage', 'outage-password')
  const list = () => app.inject({ url: `/api/user/list?access_token=${token}` })
  const loginRequest = () => app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'outage', password: 'outage-password' } })
  const ready = () => app.inject({ url: '/health/ready' })

  for (const kind of ['cut', 'blackhole'] as Array<Exclude<ProxyState, 'open'>>) {
    for (let round = 1; round <= ROUNDS; round++) {
      await t.test(`PostgreSQL ${kind}, round ${round}`, async (t) => {
        t.equal((await list()).statusCode, 200, 'the list works before')
        database[kind]()
        const toNotReady = await msUntil(async () => (await ready()).statusCode === 503, 5000)
        t.ok(toNotReady < 5000, `/health/ready answers 503 after ${Math.round(toNotReady)} ms (goal: within 5 s)`)
        // Counters the database told up to SILENCE_MS ago may still answer a list from the cache:
        // the connection that told them may learn of the cut a little after the pool does.
        const toListRefused = await msUntil(async () => (await list()).statusCode === 503, 5000)
        t.ok(toListRefused < 5000, `the list answers 503 after ${Math.round(toListRefused)} ms (the counters vouched for ${SILENCE_MS} ms at most)`)
        const during = await timed(list())
        t.equal(during.response.statusCode, 503, `the list answers 503 in ${Math.round(during.ms)} ms`)
        t.same(during.response.json(), { error: { code: 503, message: 'Service unavailable' } })
        t.ok(during.ms < 5000, 'and does not hang')
        const refused = await timed(loginRequest())
        t.same([refused.response.statusCode, refused.response.json()], [503, { error: { code: 503, message: 'Service unavailable' } }], `login answers 503 in ${Math.round(refused.ms)} ms`)
        t.equal((await app.inject({ url: SUN })).statusCode, 200, 'sun keeps answering')
        t.equal((await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: '*a*' } })).statusCode, 200, 'Markdown keeps answering')
        t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'the process is alive')

        database.restore()
        const toRecover = await msUntil(async () => (await list()).statusCode === 200 && (await ready()).statusCode === 200, 15_000)
        t.ok(toRecover < 15_000, `recovered ${Math.round(toRecover)} ms after the database came back (goal: within 15 s)`)
        t.comment(`PostgreSQL ${kind} ${round}: 503 after ${Math.round(toNotReady)} ms, list ${Math.round(during.ms)} ms, recovered in ${Math.round(toRecover)} ms`)
      })
    }
  }

  for (const kind of ['cut', 'blackhole'] as Array<Exclude<ProxyState, 'open'>>) {
    for (let round = 1; round <= ROUNDS; round++) {
      await t.test(`Redis ${kind}, round ${round}`, async (t) => {
        t.equal((await loginRequest()).statusCode, 200, 'login works before')
        redis[kind]()
        const refused = await timed(loginRequest())
        t.same([refused.response.statusCode, refused.response.json()], [503, { error: { code: 503, message: 'Service unavailable' } }], `login answers 503 in ${Math.round(refused.ms)} ms`)
        t.ok(refused.ms < 5000, 'and does not hang')
        t.equal((await list()).statusCode, 200, 'the list keeps working')
        t.equal((await app.inject({ url: SUN })).statusCode, 200, 'sun keeps working')
        t.equal((await ready()).statusCode, 200, 'ready: Redis is needed by logins only')
        redis.restore()
        const toRecover = await msUntil(async () => (await loginRequest()).statusCode === 200, 15_000)
        t.ok(toRecover < 15_000, `logins recovered ${Math.round(toRecover)} ms after Redis came back (goal: within 15 s)`)
        t.comment(`Redis ${kind} ${round}: login 503 in ${Math.round(refused.ms)} ms, recovered in ${Math.round(toRecover)} ms`)
      })
    }
  }
})
