import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { freePort, httpRequest, Replica } from './cluster/harness.js'
import { fairShareScenario, percentile } from './support/fair-share-load.js'
import { TEST_JWT_SECRET } from './support/helper.js'
import { runMeridian } from './support/meridian.js'

/** The polite clients' p99 during the flood may be this many times their own baseline's… */
const P99_GROWTH_BOUND = 3
/** …or under this, whichever is larger. */
const P99_ABSOLUTE_BOUND_MS = 100

t.test('one client flooding the Markdown route from one address: the others stay served and fast, the flooder gets 429 with Retry-After', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'meridian-flood-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  const host = '127.0.0.1'
  const endpoint = { host, port: await freePort(host) }
  // As the image runs it, with the default limits; its log goes to a file, as a container's would go to a collector.
  const env = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    HOST: host,
    PORT: String(endpoint.port),
    DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}`,
    JWT_SECRET: TEST_JWT_SECRET
  }
  const migrated = await runMeridian(['migrate'], env)
  t.equal(migrated.code, 0, migrated.stderr)
  const added = await runMeridian(['user', 'add', '--username', 'reader'], env, 'reader-password\n')
  t.equal(added.code, 0, added.stderr)
  const server = new Replica(0, endpoint, env, join(directory, 'server.log'), 30_000)
  await server.start()
  t.teardown(async () => { if (server.running) await server.stop() })

  // One after the other: the failed-login throttle counts logins under way as attempts.
  const clients: Array<{ address: string, accessToken: string }> = []
  for (let index = 0; index < 10; index++) {
    const address = `127.0.3.${11 + index}`
    const login = await httpRequest(endpoint, '/api/auth/login', { from: address, json: { username: 'reader', password: 'reader-password' } })
    t.equal(login.status, 200, `client ${address} logged in`)
    clients.push({ address, accessToken: login.json().access_token as string })
  }

  const timing = { rounds: 2, aloneMs: 1500, floodMs: 2000 }
  const { alone: baseline, duringFlood, flood } = await fairShareScenario(endpoint, clients,
    { address: '127.0.3.99', connections: 24, bytes: 900 * 1024 }, timing)
  const perSecond = (answers: number, ms: number) => answers / (ms / 1000)

  const baselineP99 = percentile(baseline.latenciesMs, 0.99)
  const floodP99 = percentile(duringFlood.latenciesMs, 0.99)
  const bound = Math.max(P99_GROWTH_BOUND * baselineP99, P99_ABSOLUTE_BOUND_MS)
  t.comment(`the ten clients: ${baseline.latenciesMs.length} answers alone, p99 ${baselineP99.toFixed(1)} ms; ` +
    `${duringFlood.latenciesMs.length} during the flood, p99 ${floodP99.toFixed(1)} ms (${(floodP99 / baselineP99).toFixed(2)}×)`)
  t.comment(`the flooder's answers: ${JSON.stringify(flood.statuses)}, network errors ${flood.networkErrors}`)
  t.same(Object.keys(baseline.statuses), ['200'], 'alone, every answer of the ten is 200')
  t.same(Object.keys(duringFlood.statuses), ['200'], 'during the flood, every answer of the ten is still 200')
  t.ok(perSecond(duringFlood.latenciesMs.length, timing.rounds * timing.floodMs) >= 0.8 * perSecond(baseline.latenciesMs.length, (timing.rounds + 1) * timing.aloneMs),
    'and they get about as many answers per second')
  t.ok(floodP99 <= bound, `their p99 during the flood, ${floodP99.toFixed(1)} ms, is within ${bound.toFixed(0)} ms`)
  const answered = Object.values(flood.statuses).reduce((sum, count) => sum + count, 0)
  // Refused, its body is not read and its connection closed (plugins/app/fair-share.ts): a client
  // still writing it may see the reset before it reads the answer.
  t.ok((flood.statuses[429] ?? 0) >= 0.9 * (answered + flood.networkErrors), 'the flooder is refused with 429, nearly always before its connection closes')
  t.equal(flood.refusedWithoutRetryAfter, 0, 'each refusal with Retry-After')
  t.ok((flood.statuses[200] ?? 0) <= 5, `the flooder got at most its 4 MiB a minute rendered (${flood.statuses[200] ?? 0} documents)`)
  t.notOk(flood.statuses[503], 'and never 503: the service is not in trouble, the client is')
})
