import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { StoreOutageLog } from '../../lib/store/outage-log.js'
import { addUser, build } from '../support/helper.js'
import { redisSkip, redisUrl } from '../support/requirements.js'
import { PrivateRedis, redisServerSkip } from '../support/redis-server.js'
import { redisBehindProxy } from '../support/tcp-proxy.js'

interface LogLine { level: number | string, msg: string, failuresSinceLastLine?: number, unavailableForMs?: number, reason?: string }

t.test('the outage log: the first failure at once, then a line per interval with the failures since, and one when the store is back', async (t) => {
  const lines: LogLine[] = []
  const record = (level: string) => (fields: unknown, msg?: string) => { lines.push({ level, msg: msg ?? '', ...(fields as object) }) }
  let now = 0
  const outageLog = new StoreOutageLog({ warn: record('warn'), info: record('info') }, 10_000, () => now)
  outageLog.answered()
  t.same(lines, [], 'nothing while the store answers')
  outageLog.failed(new Error('connect ECONNREFUSED'))
  t.match(lines, [{ level: 'warn', msg: 'login throttle store unavailable', failuresSinceLastLine: 1, reason: /connect ECONNREFUSED$/ }])
  t.notOk('err' in (lines[0] ?? {}), 'the failure in a line, no error object whose stack pino would write (#59)')
  for (let i = 0; i < 5; i++) { now += 1000; outageLog.failed(new Error('Command timed out')) }
  t.equal(lines.length, 1, 'no line for failures inside the interval')
  now = 10_000
  outageLog.failed(new Error('Command timed out'))
  t.match(lines[1], { level: 'warn', msg: 'login throttle store unavailable', failuresSinceLastLine: 6, reason: /Command timed out$/ })
  now = 12_000
  outageLog.failed(new Error('Command timed out'))
  outageLog.answered()
  outageLog.answered()
  t.same(lines.slice(2), [{ level: 'info', msg: 'login throttle store available again', failuresSinceLastLine: 1, unavailableForMs: 12_000 }], 'one line when it is back')
  now = 13_000
  outageLog.failed(new Error('connect ECONNREFUSED'))
  t.match(lines[3], { level: 'warn', failuresSinceLastLine: 1 }, 'a new outage is logged at once')
})

const skip = redisSkip()

const loginFrom = (app: FastifyInstance, remoteAddress: string) => async (username: string, password: string) =>
  await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress, payload: { username, password } })

/** Whether a login with `login` answered 200 within 6 s (the client connects after the app is ready, and reconnects). */
async function logsIn (login: () => Promise<{ statusCode: number }>): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    if ((await login()).statusCode === 200) return true
    await sleep(100)
  }
  return false
}

t.test('a replica opens one Redis connection, for the failed logins and the fair share alike', { skip }, async (t) => {
  const { proxy, url } = await redisBehindProxy(t, redisUrl as string)
  const app = await build(t, { REDIS_URL: url, RATE_LIMIT_EXEMPT: '' })
  const username = `ada-${randomBytes(4).toString('hex')}`
  await addUser(app, { username, password: 'right' })
  t.ok(await logsIn(async () => await loginFrom(app, '10.9.0.1')(username, 'right')), 'a login counted in Redis')
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await app.inject({ method: 'GET', url: '/api/date/suninfo?timestamp=1718884800&latitude=1&longitude=2', remoteAddress: '10.9.0.2' })))
  t.ok(answers.every((answer) => answer.statusCode === 200), 'requests charged to the fair share')
  await sleep(300) // a few of the fair share's syncs
  t.equal(proxy.openConnections, 1, 'one connection through the proxy, not one per store')
})

t.test('a stalled Redis: the logins it refused leave no count behind, and a wrong password still counts', { skip }, async (t) => {
  const { proxy, url } = await redisBehindProxy(t, redisUrl as string)
  const app = await build(t, { REDIS_URL: url }, { loginThrottle: { maxFailuresPerUsername: 2, maxFailuresPerAddress: 3 } })
  const [ada, bob] = [`ada-${randomBytes(4).toString('hex')}`, `bob-${randomBytes(4).toString('hex')}`]
  await addUser(app, { username: ada, password: 'right' })
  await addUser(app, { username: bob, password: 'right' })
  const login = loginFrom(app, `10.7.${randomBytes(2).join('.')}`)
  t.ok(await logsIn(async () => await login(ada, 'right')), 'a login works before')

  proxy.stall()
  const during = await Promise.all(Array.from({ length: 4 }, async () => await login(ada, 'right')))
  t.same(during.map((response) => response.statusCode), [503, 503, 503, 503], 'Redis runs the counts but does not answer: 503')
  t.equal(app.loginThrottle.refusedForStoreFailure, 4, 'each counted for the metrics')
  proxy.restore()

  t.equal((await login(bob, 'right')).statusCode, 200, 'the address is not locked out')
  t.equal((await login(ada, 'right')).statusCode, 200, 'the username is not locked out')
  t.equal((await login(ada, 'wrong')).statusCode, 403)
  t.equal((await login(ada, 'wrong')).statusCode, 403)
  const throttled = await login(ada, 'right')
  t.equal(throttled.statusCode, 429, 'wrong passwords still count')
  t.ok(Number(throttled.headers['retry-after']) > 0)
})

t.test('Redis away: one warning, not one per failure, and a line when it is back', { skip }, async (t) => {
  const { proxy, url } = await redisBehindProxy(t, redisUrl as string)
  const lines: LogLine[] = []
  const logStream = new PassThrough()
  logStream.on('data', (chunk: Buffer) => { for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line)) })
  const app = await build(t, { REDIS_URL: url, LOG_LEVEL: 'info' }, { logStream })
  const username = `ada-${randomBytes(4).toString('hex')}`
  await addUser(app, { username, password: 'right' })
  const login = loginFrom(app, `10.8.${randomBytes(2).join('.')}`)
  t.ok(await logsIn(async () => await login(username, 'right')), 'a login works before')
  lines.length = 0

  proxy.cut()
  for (let i = 0; i < 10; i++) {
    t.equal((await login(username, 'right')).statusCode, 503, `login ${i + 1} while Redis is away`)
    await sleep(150)
  }
  const warnings = lines.filter((line) => line.msg === 'login throttle store unavailable')
  t.equal(warnings.length, 1, 'one warning for the logins and the reconnection attempts')
  t.equal(warnings[0]?.level, 40)

  proxy.restore()
  t.ok(await logsIn(async () => await login(username, 'right')), 'logins resume')
  const back = lines.filter((line) => line.msg === 'login throttle store available again')
  t.equal(back.length, 1, 'one line when it is back')
  t.match(back[0], { level: 30, failuresSinceLastLine: Number, unavailableForMs: Number })
  t.ok((back[0]?.failuresSinceLastLine ?? 0) >= 9, `with the failures since the warning (${back[0]?.failuresSinceLastLine})`)
})

t.test('a Redis stall: no login with the right password is refused 429, during it or when it ends', { skip: redisServerSkip() }, async (t) => {
  const redis = await PrivateRedis.start(t)
  const app = await build(t, { REDIS_URL: redis.url })
  const tag = randomBytes(4).toString('hex')
  // Three users whose clients give up after 300 ms and try again, each from an address of its own:
  // their earlier logins are still waiting for Redis when the next is sent.
  const impatient = ['ada', 'bob', 'cy'].map((name, i) => ({ username: `${name}-${tag}`, login: loginFrom(app, `10.9.${i}.1`) }))
  // Thirty users behind one NAT, each waiting for its answer: when the stall ends, more than the
  // address's 20 are in flight together.
  const behindOneAddress = loginFrom(app, '10.9.9.9')
  const patient = Array.from({ length: 30 }, (_, i) => `nat-${i}-${tag}`)
  for (const username of [...impatient.map((user) => user.username), ...patient]) await addUser(app, { username, password: 'right' })
  t.ok(await logsIn(async () => await behindOneAddress(patient[0] as string, 'right')), 'a login works before')

  const statuses: number[] = []
  const inFlight: Array<Promise<void>> = []
  let sending = true
  for (const { username, login } of impatient) {
    inFlight.push((async () => {
      while (sending) {
        inFlight.push(login(username, 'right').then((response) => { statuses.push(response.statusCode) }))
        await sleep(300)
      }
    })())
  }
  for (const username of patient) {
    inFlight.push((async () => {
      while (sending) {
        const { statusCode } = await behindOneAddress(username, 'right')
        statuses.push(statusCode)
        // Logged in, a user comes back later; refused, at once.
        await sleep(statusCode === 200 ? 500 : 20)
      }
    })())
  }
  redis.pause()
  await sleep(5000)
  const duringStall = statuses.length
  redis.resume()
  await sleep(2500)
  sending = false
  while (inFlight.length > 0) await inFlight.pop()

  const counts = (from: number) => statuses.slice(from).reduce<Record<number, number>>((tally, status) => ({ ...tally, [status]: (tally[status] ?? 0) + 1 }), {})
  t.same(Object.keys(counts(0)).sort(), ['200', '503'], `only 200 and 503: ${JSON.stringify(counts(0))}`)
  t.ok((counts(0)[503] ?? 0) >= 30, 'the logins Redis could not count answered 503')
  t.ok((counts(duringStall)[200] ?? 0) >= 33, `every user logs in once it ends (${JSON.stringify(counts(duringStall))})`)

  const ada = impatient[0] as { username: string, login: ReturnType<typeof loginFrom> }
  for (let i = 0; i < 5; i++) t.equal((await ada.login(ada.username, 'wrong')).statusCode, 403)
  t.equal((await ada.login(ada.username, 'right')).statusCode, 429, 'wrong passwords still count')
})
