/**
 * `npm run bench`: every part, one table on standard output (progress on standard error), exit
 * status 1 when a figure is past its floor (bench/floors.ts). `npm run bench -- sun markdown` runs
 * some parts; `npm run bench -- compare REF` runs the working tree beside git REF, route by route (bench/compare.ts),
 * with any parts named after it. BENCH_ROUNDS (9) and BENCH_SECONDS (4) set the alternating rounds of each rate
 * comparison; BENCH_USERS (1,000,000) the users of the scale part; BENCH_SESSIONS (1,000,000) the
 * ended sessions of the sessions part; BENCH_DATABASE_URL (else
 * TEST_DATABASE_URL, else the local server; `none` to skip) the PostgreSQL server; BENCH_REDIS_URL
 * (else TEST_REDIS_URL, else the local server; `none` to skip) the Redis of the limiter's rows.
 */
import { execFileSync, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import pg from 'pg'
import BetterSqlite3 from '../lib/store/better-sqlite3.js'
import { fairShareScenario } from '../test/support/fair-share-load.js'
import { httpRequest } from '../test/support/http-request.js'
import { pathologicalCases, README, README_WITH_HTML, README_WITH_MATH } from '../test/support/markdown-corpus.js'
import { DEFAULT_MARKDOWN_FEATURES, renderSafeMarkdown, type RawHtml } from '../lib/markdown/render.js'
import { storeKeyOf } from '../lib/fair-share/quotas.js'
import { POLICY_NAMES, REDIS_KEY_PREFIX } from '../plugins/app/fair-share.js'
import { FLOORS } from './floors.js'
import { sunQueries } from './sun-queries.js'
import {
  type BenchRequest, type ChildServer, JSON_HEADERS, load, log, median, medianRates, medianRatesAndCpu, ms, percent, percentile, probeLiveness, ratio,
  pinServersAwayFromLoad, medianRoundRatio, roundsOverProcessSets, startServer, Table, times
} from './harness.js'
import { BENCH_USER } from './servers.js'
import { BENCH_REQUESTS_PER_DAY, CLI, type Configuration, EXEMPT_CLIENT, freePort, startService } from './service.js'
import { capacity, markdownRequest } from './capacity.js'
import { compare } from './compare.js'
import { listRequest, logIn, postgresUrl, refreshRequest, type SetupClient, sqliteUrl, staggeredOver, type Tokens, withServers } from './fixtures.js'

const table = new Table()
const KiB = 1024
const MiB = 1024 * KiB
const REPORT_FULL_COLLECTIONS = fileURLToPath(new URL('report-full-collections.cjs', import.meta.url))
const HOLD_SQLITE_WRITE_LOCK = fileURLToPath(new URL('../scripts/hold-sqlite-write-lock.ts', import.meta.url))

/** A Redis server for the limiter's shared counts (BENCH_REDIS_URL, else TEST_REDIS_URL, else the local one; `none` to skip), if one answers. */
async function benchRedis (): Promise<{ url: string, redis: Redis } | undefined> {
  const url = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
  if (url === 'none') return undefined
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    await redis.connect()
    await redis.ping()
    return { url, redis }
  } catch {
    redis.disconnect()
    return undefined
  }
}

/** What the database of `databaseUrl` has committed, as PostgreSQL counts it (pg_stat_database). */
async function committedTransactions (databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ xact_commit: string }>('select xact_commit from pg_stat_database where datname = current_database()')
    return Number(rows[0]?.xact_commit)
  } finally {
    await client.end()
  }
}

/** A backend that goes idle publishes its statistics within PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s). */
const STATISTICS_FLUSH_MS = 11_000

/**
 * Transactions the service's database commits a request, over 3 s of `request` (32 connections): its
 * reads and writes, whatever runs beside them (activity written once a second, the counters feed's
 * heartbeat). Each autocommit statement is a transaction; the benchmark's own two reads add two.
 */
async function transactionsPerRequest (databaseUrl: string, serviceUrl: string, request: BenchRequest): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, STATISTICS_FLUSH_MS))
  const before = await committedTransactions(databaseUrl)
  const result = await load({ url: serviceUrl, requests: [request], connections: 32, duration: 3 })
  await new Promise((resolve) => setTimeout(resolve, STATISTICS_FLUSH_MS))
  return (await committedTransactions(databaseUrl) - before) / result.requests.total
}

/** Behind the balancer of the sun part: a client limited but under its quota (no RateLimit headers), and one past half of it (the headers on every answer). */
const LIMITED_CLIENT = '10.0.0.2'
const HALF_USED_CLIENT = '10.0.0.3'
const DAY_MS = 86_400_000

/** Processes of each configuration in the sun part, each round on one set in turn (bench/harness.ts, roundsOverProcessSets). */
const SUN_PROCESSES = 3

async function sun (): Promise<void> {
  const requests = sunQueries()
  const services = Array.from({ length: SUN_PROCESSES }, () => [startService('image', sqliteUrl()), startService('quiet', sqliteUrl())]).flat()
  await withServers([startServer('fixed'), startServer('fixed-logged'), startServer('bare-sun'), ...services],
    async (servers) => {
      const [fixed, fixedLogged, bare, ...imageAndQuiet] = servers
      pinServersAwayFromLoad(servers)
      log(`sun: the service as the image runs it, quiet (${SUN_PROCESSES} processes of each), Fastify with a fixed body without and with its logger, node:http with the searches (32 connections, as issue #56 measured; the servers on one core, the load on the other)`)
      const staggered = staggeredOver(requests)
      const sets = Array.from({ length: SUN_PROCESSES }, (_, set) =>
        ([['image', imageAndQuiet[2 * set]], ['quiet', imageAndQuiet[2 * set + 1]], ['fixed', fixed], ['fixed, logger at info', fixedLogged], ['searches', bare]] as const)
          .map(([name, server]) => ({ name, url: server?.url ?? '', pid: server?.child.pid, requests, connections: 32, setupClient: staggered })))
      const rounds = await roundsOverProcessSets(sets)
      // Each ratio is the median of the rounds' own (bench/harness.ts, medianRoundRatio).
      const over = (a: string, b: string): number => medianRoundRatio(rounds.rates[a] ?? [], rounds.rates[b] ?? [])
      table.guard('sun: image ÷ quiet', over('image', 'quiet'), FLOORS.imageVsQuiet, ratio)
      table.guard('sun: image ÷ Fastify fixed body, logger at info', over('image', 'fixed, logger at info'), FLOORS.sunImageVsLoggedFixedBody, ratio)
      table.note('sun: image ÷ Fastify fixed body, no logger', ratio(over('image', 'fixed')))
      table.note('sun: Fastify fixed body, logger at info ÷ no logger', ratio(over('fixed, logger at info', 'fixed')))
      table.guard('sun: quiet ÷ Fastify fixed body, no logger', over('quiet', 'fixed'), FLOORS.sunVsFixedBody, ratio)
      table.guard('sun: quiet ÷ bare searches', over('quiet', 'searches'), FLOORS.sunVsBareSearches, times)
      const cpu = (name: string): string => median(rounds.cpuMicrosPerAnswer[name] ?? []).toFixed(1)
      table.note('sun: CPU an answer, image ÷ quiet', `${cpu('image')} ÷ ${cpu('quiet')} µs`)
    })
}

/** A limited client's count of requests in Redis, for the windows (days) around now. */
const requestKeysOf = (client: string): string[] => [-1, 0, 1].map((days) =>
  REDIS_KEY_PREFIX + storeKeyOf(POLICY_NAMES.requests, client, Math.floor(Date.now() / DAY_MS) + days))

/** The fair share's cost on the sun route, the service quiet behind a trusted balancer. */
async function limiter (): Promise<void> {
  const requests = sunQueries()
  const store = await benchRedis()
  const keys = [LIMITED_CLIENT, HALF_USED_CLIENT].flatMap(requestKeysOf)
  try {
    if (store !== undefined) {
      await store.redis.del(...keys)
      // More than half of the quota, as if used earlier today on another replica.
      await store.redis.set(requestKeysOf(HALF_USED_CLIENT)[1] as string, String(0.6 * BENCH_REQUESTS_PER_DAY), 'PX', 2 * DAY_MS)
    }
    await withServers([startService('quiet', sqliteUrl(), 0, { behindBalancer: true, redisUrl: store?.url })], async ([service]) => {
      await limiterCost(service as ChildServer, requests, staggeredOver(requests), store !== undefined)
    })
  } finally {
    // Once the service has stopped: its syncs would write them again.
    await store?.redis.del(...keys)
    await store?.redis.quit()
  }
}

/**
 * What the fair share costs the cheapest route, on one process behind a trusted balancer: an exempt client (the
 * limiter's hook answers at once) against a limited client under half its quota, and, with the counts shared through
 * Redis, one past half of it (set there beforehand), which gets the RateLimit headers on every answer.
 */
async function limiterCost (service: ChildServer, requests: BenchRequest[], staggered: SetupClient, shared: boolean): Promise<void> {
  const url = service.url
  const from = (client: string): BenchRequest[] => requests.map((request) => ({ ...request, headers: { ...request.headers, 'x-forwarded-for': client } }))
  if (shared) {
    await rateLimitHeaderOf(url, HALF_USED_CLIENT) // the replica's first sync of the client reads the total
    await new Promise((resolve) => setTimeout(resolve, 500))
    if (await rateLimitHeaderOf(url, HALF_USED_CLIENT) === null) throw new Error('the client past half its quota gets no RateLimit header')
  }
  if (await rateLimitHeaderOf(url, LIMITED_CLIENT) !== null) throw new Error('the client under half its quota gets RateLimit headers')
  log(`sun: the service quiet behind a balancer (TRUST_PROXY), its clients exempt from the fair-share limits or limited under them${shared ? ', the counts shared through Redis' : ' (no Redis answered: counts of its own, and no client past half its quota)'} (20 connections)`)
  const { rates, cpuMicrosPerAnswer: cpu } = await medianRatesAndCpu([
    { name: 'exempt', url, requests: from(EXEMPT_CLIENT), connections: 20, setupClient: staggered },
    { name: 'limited', url, requests: from(LIMITED_CLIENT), connections: 20, setupClient: staggered },
    ...(shared ? [{ name: 'limited, past half', url, requests: from(HALF_USED_CLIENT), connections: 20, setupClient: staggered }] : [])
  ], service.child.pid as number)
  const inRedis = shared ? ', counts in Redis' : ''
  const of = (figures: Record<string, number>, name: string): number => figures[name] ?? NaN
  // The floor is on the server's CPU an answer: a rate moves with what the load generator takes from the host.
  table.guard(`sun: the limiter, one process: CPU an answer, exempt ÷ limited under its limits${inRedis}`, of(cpu, 'exempt') / of(cpu, 'limited'), FLOORS.sunLimitedVsExempt, ratio)
  table.note(`sun: the limiter, one process: rate, limited under its limits ÷ exempt${inRedis}`, ratio(of(rates, 'limited') / of(rates, 'exempt')))
  if (shared) {
    table.guard(`sun: the limiter, one process: CPU an answer, exempt ÷ past half its quota (RateLimit headers)${inRedis}`, of(cpu, 'exempt') / of(cpu, 'limited, past half'), FLOORS.sunLimitedVsExempt, ratio)
    table.note(`sun: the limiter, one process: rate, past half its quota ÷ exempt${inRedis}`, ratio(of(rates, 'limited, past half') / of(rates, 'exempt')))
  } else {
    table.note('sun: the limiter, a client past half its quota (RateLimit headers)', 'no Redis')
  }
  table.note('sun: the limiter, one process: CPU an answer, exempt', `${of(cpu, 'exempt').toFixed(1)} µs`)
}

/** The RateLimit header of a sun answer to `client` behind the balancer at `url`, or null. */
async function rateLimitHeaderOf (url: string, client: string): Promise<string | null> {
  const response = await fetch(`${url}/api/date/suninfo?timestamp=1700000000&latitude=51.5&longitude=0`, { headers: { 'x-forwarded-for': client } })
  if (response.status !== 200) throw new Error(`the sun route answered ${response.status} to ${client}`)
  return response.headers.get('ratelimit')
}

/** The scenario of issue #45 against the service as the image runs it, with its default limits. */
async function fairShare (): Promise<void> {
  await withServers([startService('image', sqliteUrl())], async ([service]) => {
    const endpoint = { host: '127.0.0.1', port: Number(new URL(service?.url ?? '').port) }
    log('fair share: ten clients on addresses of their own (sun, small Markdown, a list page every 200 ms), 2 s alone then 3 s while one more floods Markdown with 900 KB documents on 24 connections, five times')
    const clients: Array<{ address: string, accessToken: string }> = []
    for (let index = 0; index < 10; index++) {
      const address = `127.0.3.${11 + index}`
      const login = await httpRequest(endpoint, '/api/auth/login', { from: address, json: BENCH_USER })
      if (login.status !== 200) throw new Error(`login from ${address} answered ${login.status}`)
      clients.push({ address, accessToken: login.json().access_token })
    }
    const timing = { rounds: 5, aloneMs: 2000, floodMs: 3000 }
    const { alone: baseline, duringFlood, flood } = await fairShareScenario(endpoint, clients,
      { address: '127.0.3.99', connections: 24, bytes: 900 * KiB }, timing)
    const alone = percentile(baseline.latenciesMs, 0.99)
    const during = percentile(duringFlood.latenciesMs, 0.99)
    const failed = (result: { statuses: Record<number, number> }) => Object.entries(result.statuses).filter(([status]) => status !== '200').reduce((sum, [, count]) => sum + count, 0)
    table.note('fair share: ten clients\' p99 alone', ms(alone))
    table.note('fair share: ten clients\' p99 during the flood', ms(during))
    table.guard('fair share: ten clients\' p99 during the flood ÷ alone', during / alone, FLOORS.floodP99VsAlone, times)
    table.note('fair share: ten clients\' answers per second, during ÷ alone', ratio((duringFlood.latenciesMs.length / (timing.rounds * timing.floodMs)) / (baseline.latenciesMs.length / ((timing.rounds + 1) * timing.aloneMs))))
    table.note('fair share: ten clients\' answers not 200', String(failed(baseline) + failed(duringFlood)))
    table.note('fair share: the flooder\'s answers', `${flood.statuses[429] ?? 0} × 429, ${flood.statuses[200] ?? 0} × 200, ${flood.networkErrors} resets`)
  })
}

async function auth (): Promise<void> {
  const postgres = await postgresUrl()
  type Service = readonly [Configuration, string, string]
  const services: Service[] = [['image', 'SQLite', sqliteUrl()], ['quiet', 'SQLite', sqliteUrl()], ...(postgres !== undefined ? [['quiet', 'PostgreSQL', postgres.url] as const] : [])]
  const nameOf = ([configuration, database]: Service): string => `${configuration} on ${database}`
  try {
    await withServers([startServer('fixed'), ...services.map(async ([configuration, , url]) => await startService(configuration, url, 1000))], async ([fixed, ...started]) => {
      const tokens = await Promise.all(started.map(async (service) => await logIn(service.url)))
      for (const [route, request, floor, postgresFloor] of [['list page 1', listRequest, FLOORS.listVsFixedBody, FLOORS.postgresListVsFixedBody], ['refresh', refreshRequest, FLOORS.refreshVsFixedBody, FLOORS.postgresRefreshVsFixedBody]] as const) {
        log(`${route}: the service (${services.map(nameOf).join(', ')}; 1,001 users), Fastify with a fixed body`)
        // The fixed-body server gets the very requests the services get: same URL, token and body.
        const rates = await medianRates([{ name: 'fixed', url: fixed?.url ?? '', requests: [request(tokens[0] as Tokens)] },
          ...started.map((service, i) => ({ name: nameOf(services[i] as Service), url: service.url, requests: [request(tokens[i] as Tokens)] }))])
        const of = (name: string): number => rates[name] ?? NaN
        table.guard(`${route}: image ÷ quiet, on SQLite`, of('image on SQLite') / of('quiet on SQLite'), FLOORS.imageVsQuiet, ratio)
        table.guard(`${route}: quiet on SQLite ÷ Fastify fixed body`, of('quiet on SQLite') / of('fixed'), floor, ratio)
        if (postgres !== undefined) {
          table.guard(`${route}: quiet on PostgreSQL ÷ Fastify fixed body`, of('quiet on PostgreSQL') / of('fixed'), postgresFloor, ratio)
          const onPostgres = services.findIndex(([, database]) => database === 'PostgreSQL')
          const perRequest = await transactionsPerRequest(postgres.url, started[onPostgres]?.url ?? '', request(tokens[onPostgres] as Tokens))
          table.note(`${route}: PostgreSQL transactions a request`, perRequest.toFixed(3))
        }
      }
    })
  } finally {
    await postgres?.drop()
  }
  if (postgres === undefined) table.note('list page 1 and refresh on PostgreSQL', 'no server')
}

async function markdown (): Promise<void> {
  await withServers([
    startService('quiet', sqliteUrl()), startService('image', sqliteUrl()), startServer('bare-markdown'), startServer('bare-markdown-html'),
    startServer('bare-markdown-highlight-math')
  ], async ([service, image, bare, bareHtml, bareHighlightMath]) => {
    const url = service?.url ?? ''
    log(`markdown: the service quiet and as the image runs it, node:http + markdown-it on the ${(Buffer.byteLength(README) / KiB).toFixed(1)} KiB README`)
    const requests: BenchRequest[] = [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: README }) }]
    const rates = await medianRates([{ name: 'quiet', url, requests }, { name: 'image', url: image?.url ?? '', requests }, { name: 'bare', url: bare?.url ?? '', requests }])
    const of = (name: string): number => rates[name] ?? NaN
    table.guard('markdown README: quiet ÷ node:http + markdown-it', of('quiet') / of('bare'), FLOORS.markdownVsBare, ratio)
    table.note('markdown README: image ÷ node:http + markdown-it', ratio(of('image') / of('bare')))

    log('markdown: the README (its fences highlighted) and the README with formulas, the service quiet and node:http + markdown-it + highlight.js + KaTeX')
    const mathRequests: BenchRequest[] = [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: README_WITH_MATH }) }]
    const highlightRates = await medianRates([
      { name: 'quiet', url, requests },
      { name: 'bare', url: bareHighlightMath?.url ?? '', requests },
      { name: 'quiet, math', url, requests: mathRequests },
      { name: 'bare, math', url: bareHighlightMath?.url ?? '', requests: mathRequests }
    ])
    table.guard('markdown README: quiet ÷ node:http + markdown-it + highlight.js', (highlightRates.quiet ?? NaN) / (highlightRates.bare ?? NaN), FLOORS.markdownHighlightedVsBare, ratio)
    table.guard('markdown README with formulas: quiet ÷ node:http + markdown-it + highlight.js + KaTeX',
      (highlightRates['quiet, math'] ?? NaN) / (highlightRates['bare, math'] ?? NaN), FLOORS.markdownMathVsBare, ratio)

    log('markdown: the README with raw HTML, the service quiet and node:http + markdown-it + the same sanitizer')
    const htmlRequests: BenchRequest[] = [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: README_WITH_HTML }) }]
    const htmlRates = await medianRates([{ name: 'quiet', url, requests: htmlRequests }, { name: 'bare', url: bareHtml?.url ?? '', requests: htmlRequests }])
    table.guard('markdown README with raw HTML: quiet ÷ node:http + markdown-it + sanitizer', (htmlRates.quiet ?? NaN) / (htmlRates.bare ?? NaN), FLOORS.markdownHtmlVsBare, ratio)
    table.note('markdown README with raw HTML ÷ without, the service quiet', ratio((htmlRates.quiet ?? NaN) / of('quiet')))
    const perRender = (rawHtml: RawHtml): number => {
      for (let warm = 0; warm < 200; warm++) renderSafeMarkdown(README_WITH_HTML, { ...DEFAULT_MARKDOWN_FEATURES, rawHtml })
      const started = performance.now()
      for (let round = 0; round < 1000; round++) renderSafeMarkdown(README_WITH_HTML, { ...DEFAULT_MARKDOWN_FEATURES, rawHtml })
      return (performance.now() - started) / 1000
    }
    const escaped = perRender('escape')
    const github = perRender('github')
    table.note('markdown README with raw HTML: a render, sanitized ÷ escaped (in process)', `${(github * 1000).toFixed(0)} µs ÷ ${(escaped * 1000).toFixed(0)} µs = ${ratio(github / escaped)}`)

    // What compression costs a replica: the same ~60 KB answer (README ×8), asked for with and without brotli/gzip.
    const large = JSON.stringify({ markdown: README.repeat(8) })
    log(`markdown: a ${(large.length / KiB).toFixed(0)} KiB document, the service quiet, its answer compressed or not`)
    const compressionRates = await medianRates([
      { name: 'compressed', url, requests: [{ method: 'POST', path: '/api/markdown/parse', headers: { ...JSON_HEADERS, 'accept-encoding': 'br, gzip' }, body: large }] },
      { name: 'identity', url, requests: [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: large }] }
    ])
    table.note('markdown README ×8: quiet, answer compressed (brotli) ÷ not', ratio((compressionRates.compressed ?? NaN) / (compressionRates.identity ?? NaN)))

    const render = async (source: string): Promise<number> => {
      const started = performance.now()
      const response = await fetch(`${url}/api/markdown/parse`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ markdown: source }) })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`a hostile render answered ${response.status}`)
      return performance.now() - started
    }
    // The slowest hostile case, found at 100 KiB (the work is linear: it is the slowest at 1 MiB too),
    // after a first render has started a render thread.
    await render(README.repeat(25))
    let slowest = { name: '', generate: (size: number): string => String(size), ms: -1 }
    for (const hostile of pathologicalCases) {
      const took = await render(hostile.generate(100 * KiB))
      if (took > slowest.ms) slowest = { ...hostile, ms: took }
    }
    log(`markdown: /health/live while 1 MiB of "${slowest.name}" renders`)
    const rendered = render(slowest.generate(MiB))
    const latencies = await probeLiveness(url, rendered)
    table.guard(`/health/live p99 while 1 MiB "${slowest.name}" renders (${(await rendered).toFixed(0)} ms)`,
      percentile(latencies, 0.99), FLOORS.livenessDuringHostileMarkdownP99Ms, ms)
  })
}

async function scale (): Promise<void> {
  const users = Number(process.env.BENCH_USERS ?? 1_000_000)
  const databaseUrl = sqliteUrl()
  const seeding = performance.now()
  await withServers([startService('quiet', databaseUrl, users - 1)], async ([service]) => {
    const url = service?.url ?? ''
    const tokens = await logIn(url)
    log(`scale: ${users.toLocaleString('en')} users on SQLite, seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s`)
    const lastPage = Math.ceil(users / 20)
    for (const [name, page] of [['page 1', 1], ['a middle page', Math.ceil(lastPage / 2)], ['the last page', lastPage]] as const) {
      await load({ url, requests: [listRequest(tokens, page)], connections: 20, duration: 2 })
      const result = await load({ url, requests: [listRequest(tokens, page)], connections: 20, duration: 5 })
      log(`  ${name}: ${result.requests.average.toFixed(0)} req/s p99 ${result.latency.p99} ms non-2xx ${result.non2xx}`)
      table.guard(`${users.toLocaleString('en')} users, list ${name}: p99`, result.latency.p99, FLOORS.millionUsersPageP99Ms, ms)
    }

    // A user added by the CLI (another process, as an operator would) while pages all over the list are read.
    log('scale: /health/live while `meridian user add` lands under list load')
    let sent = 0
    const spread: BenchRequest = { ...listRequest(tokens), setupRequest: (request) => ({ ...request, path: listRequest(tokens, 1 + (sent++ * 7919) % lastPage).path }) }
    const listLoad = load({ url, requests: [spread], connections: 10, duration: 6 })
    const added = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        const cli = spawn(process.execPath, [CLI, 'user', 'add', '--username', `added-under-load-${process.pid}`],
          { env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl }, stdio: ['pipe', 'ignore', 'inherit'] })
        cli.stdin.end(BENCH_USER.password)
        cli.once('exit', (code) => { code === 0 ? resolve() : reject(new Error(`user add exited with ${String(code)}`)) })
      }, 1000)
    })
    // From before the add until two seconds after it, while the list load goes on.
    const latencies = await probeLiveness(url, added.then(async () => await new Promise((resolve) => setTimeout(resolve, 2000))))
    await listLoad
    table.guard(`${users.toLocaleString('en')} users: /health/live p99 while user add lands`, percentile(latencies, 0.99), FLOORS.livenessDuringUserAddP99Ms, ms)

    // Another process (a backup, a long `user seed`) holds the write lock while pages are read and
    // the readers' activity waits to be written.
    log('scale: /health/live while another process holds the write lock for 3 s under list load')
    const lockedLoad = load({ url, requests: [spread], connections: 10, duration: 6 })
    const lockHeld = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        const holder = spawn(process.execPath, ['--import', 'tsx', HOLD_SQLITE_WRITE_LOCK, databaseUrl.slice('sqlite:'.length), '3000'], { stdio: ['ignore', 'ignore', 'inherit'] })
        holder.once('exit', (code) => { code === 0 ? resolve() : reject(new Error(`the lock holder exited with ${String(code)}`)) })
      }, 1000)
    })
    const latenciesWhileLocked = await probeLiveness(url, lockHeld)
    await lockedLoad
    table.guard(`${users.toLocaleString('en')} users: /health/live p99 while another process holds the write lock 3 s`, percentile(latenciesWhileLocked, 0.99), FLOORS.livenessDuringWriteLockP99Ms, ms)
  })
}

/**
 * Ended sessions pruned by the running service: they are written into the database before it
 * starts (the service prunes at its start, then every minute), and /health/live is probed from
 * the moment it listens until the table is empty. On SQLite, where each batch runs on the event loop.
 */
async function sessions (): Promise<void> {
  const count = Number(process.env.BENCH_SESSIONS ?? 1_000_000)
  const databaseUrl = sqliteUrl()
  execFileSync(process.execPath, [CLI, 'migrate'], { env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'] })
  const database = new BetterSqlite3(databaseUrl.slice('sqlite:'.length))
  const writing = performance.now()
  const now = Date.now()
  database.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO sessions (id, user_id, started_at, last_used_at, expires_at, ended_at, end_cause)
    SELECT lower(hex(randomblob(11))), 1 + i % 1000, ? - i, ? - i, ? + 2592000000, ? - i % 60000, 'logout' FROM n`)
    .run(count, now, now, now, now)
  const remaining = (): number => (database.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n
  // Not a count while probing: a scan of the table here would hold this process's event loop and delay its probes.
  const anyLeft = (): boolean => database.prepare('SELECT 1 FROM sessions LIMIT 1').get() !== undefined
  log(`sessions: ${count.toLocaleString('en')} ended sessions written in ${((performance.now() - writing) / 1000).toFixed(1)} s`)
  try {
    await withServers([startService('quiet', databaseUrl)], async ([service]) => {
      const left = remaining()
      const started = performance.now()
      const pruned = (async () => { while (anyLeft()) await new Promise((resolve) => setTimeout(resolve, 200)) })()
      const latencies = await probeLiveness(service?.url ?? '', pruned)
      const seconds = (performance.now() - started) / 1000
      log(`sessions: ${left.toLocaleString('en')} left when the service listened, pruned in ${seconds.toFixed(1)} s; ` +
        `the slowest of ${latencies.length} probes: ${[...latencies].sort((a, b) => b - a).slice(0, 5).map((latency) => latency.toFixed(0)).join(', ')} ms`)
      table.guard(`${count.toLocaleString('en')} ended sessions pruned by the running service (${left.toLocaleString('en')} of them in ${seconds.toFixed(0)} s while probed): /health/live p99`,
        percentile(latencies, 0.99), FLOORS.livenessDuringSessionPruningP99Ms, ms)
    })
  } finally {
    database.close()
  }
}

/** Memory of `meridian serve` read by bench/report-full-collections.cjs after one of V8's full collections, in bytes. */
interface AfterFullCollection { heapKept: number, rss: number, external: number, arrayBuffers: number }
/** What that preload sends: V8's full collections so far, and the memory after the latest. */
interface FullCollections { fullCollections: number, afterLatest: AfterFullCollection | null }

/** Mixed requests loaded at a time while waiting for V8's next full collection, and at most how many in all. */
const MEMORY_STEP = 50_000
const MAX_MEMORY_REQUESTS = 1_500_000

/**
 * `meridian serve` exactly as `npm start` runs it, under mixed load: the heap it keeps after V8's
 * own full collections, read after the first one past 100,000 requests and after the first one at
 * least 200,000 requests later. The load goes on until V8 makes each (here the first under load
 * came after 450,000–550,000 requests on Node 20, 100,000–150,000 on Node 24), for at most
 * MAX_MEMORY_REQUESTS.
 */
async function memory (): Promise<void> {
  const port = await freePort()
  // Its load is exempt from the fair share, as an operator's load test would be: what is measured is what the answers keep.
  const env = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: sqliteUrl(), RATE_LIMIT_EXEMPT: '127.0.0.1' }
  execFileSync(process.execPath, [CLI, 'user', 'add', '--username', BENCH_USER.username], { env, input: BENCH_USER.password, stdio: ['pipe', 'ignore', 'inherit'] })
  execFileSync(process.execPath, [CLI, 'user', 'seed', '--count', '1000'], { env, input: BENCH_USER.password, stdio: ['pipe', 'ignore', 'inherit'] })
  const server = spawn(process.execPath, ['--require', REPORT_FULL_COLLECTIONS, CLI, 'serve'], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const running = (): boolean => server.exitCode === null && server.signalCode === null
  const exited = new Promise((resolve) => server.once('exit', resolve))
  const report = async (): Promise<FullCollections> => await new Promise((resolve, reject) => {
    const gone = (): void => { reject(new Error(`meridian serve exited (${server.exitCode ?? server.signalCode}) before it reported its memory`)) }
    if (!running()) { gone(); return }
    server.once('message', resolve)
    void exited.then(gone)
    server.send('report', (error) => { if (error !== null) gone() })
  })
  try {
    const url = `http://127.0.0.1:${port}`
    for (let attempt = 0; !(await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)); attempt++) {
      if (attempt > 100) throw new Error('meridian serve did not become ready')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const tokens = await logIn(url)
    const mixed: BenchRequest[] = [
      ...sunQueries().slice(0, 2),
      listRequest(tokens),
      refreshRequest(tokens),
      listRequest(tokens, 7),
      { method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: README }) },
      { method: 'GET', path: '/health/live' }
    ]
    let sent = 0
    const loadMixed = async (amount: number, waitingSince: number): Promise<void> => {
      if (sent + amount > MAX_MEMORY_REQUESTS) {
        throw new Error(`V8 made no full collection of its own in ${(sent - waitingSince) / 1000}k mixed requests (${sent / 1000}k in all)`)
      }
      const result = await load({ url, requests: mixed, amount })
      sent += amount
      // Refusals would measure what a refusal keeps, not what an answer does.
      if (result.non2xx > 0) throw new Error(`memory: ${result.non2xx} of ${amount} answers were not 2xx`)
    }
    /** Loads until `atLeast` requests are sent, then on until V8 makes a full collection: the memory after it, and when. */
    const nextCollectionAfter = async (atLeast: number): Promise<AfterFullCollection & { between: [number, number] }> => {
      if (sent < atLeast) await loadMixed(atLeast - sent, sent)
      const { fullCollections: since } = await report()
      const waitingSince = sent
      for (;;) {
        const from = sent
        await loadMixed(MEMORY_STEP, waitingSince)
        const { fullCollections, afterLatest } = await report()
        if (fullCollections > since && afterLatest !== null) {
          const mb = (bytes: number): string => (bytes / MiB).toFixed(1)
          log(`memory: a full collection by V8 between ${from / 1000}k and ${sent / 1000}k mixed requests kept ${mb(afterLatest.heapKept)} MB of heap, ` +
            `${mb(afterLatest.external)} MB outside it (${mb(afterLatest.arrayBuffers)} MB array buffers), ${mb(afterLatest.rss)} MB resident`)
          return { ...afterLatest, between: [from, sent] }
        }
      }
    }
    const first = await nextCollectionAfter(100_000)
    const last = await nextCollectionAfter(first.between[1] + 200_000)
    const when = ({ between: [from, to] }: { between: [number, number] }): string => `${from / 1000}–${to / 1000}k`
    const change = (key: keyof AfterFullCollection): string => `${(first[key] / MiB).toFixed(1)} → ${(last[key] / MiB).toFixed(1)} MB`
    table.guard(`heap kept after V8's own full collections at ${when(first)} and ${when(last)} mixed requests (${change('heapKept')}): growth`,
      last.heapKept / first.heapKept - 1, FLOORS.memoryGrowthUnderLoad, percent)
    table.note('memory outside the heap (external) after the same collections', change('external'))
    table.note('resident memory after the same collections', change('rss'))
  } finally {
    if (running()) server.kill()
    await exited
  }
}

/** Does an unknown username answer as slowly as a wrong password? Printed, not guarded. */
async function login (): Promise<void> {
  await withServers([startServer('app', sqliteUrl(), '0')], async ([service]) => {
    const failedLoginMs = async (username: string): Promise<number> => {
      const started = performance.now()
      const response = await fetch(`${service?.url ?? ''}/api/auth/login`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ username, password: 'a wrong guess' }) })
      await response.arrayBuffer()
      // Overload (503 with Retry-After) from a host that is busy elsewhere: this attempt does not count.
      if (response.status === 503) return await failedLoginMs(username)
      if (response.status !== 403) throw new Error(`a failed login answered ${response.status}`)
      return performance.now() - started
    }
    const wrongPassword: number[] = []
    const unknownUser: number[] = []
    for (let i = 0; i < 41; i++) {
      wrongPassword.push(await failedLoginMs(BENCH_USER.username))
      unknownUser.push(await failedLoginMs(`nobody-${i}`))
    }
    table.note(`failed login, unknown user ÷ wrong password (medians of 41, ${median(wrongPassword).toFixed(0)} ms)`, ratio(median(unknownUser) / median(wrongPassword)))
  })
}

/** What a replica needs per load, for docs/operations.md ("What a replica needs"): no floor. */
async function capacityOfOneReplica (): Promise<void> {
  await capacity(table, sqliteUrl(), async (url) => {
    const tokens = await logIn(url)
    const flood = README.repeat(Math.ceil(900_000 / README.length)).slice(0, 900_000)
    return [
      { name: 'sun', requests: sunQueries(), connections: 10 },
      { name: 'user list, page 1', requests: [listRequest(tokens)], connections: 10 },
      { name: `Markdown, the ${(README.length / KiB).toFixed(1)} KiB README`, requests: [markdownRequest(README)], connections: 10 },
      // Eight fit in the render queue's 8 MiB; twenty-four are the flood of issue #45, mostly answered 503.
      { name: 'Markdown, 900 KB documents', requests: [markdownRequest(flood)], connections: 8 },
      { name: 'Markdown flood, 900 KB documents', requests: [markdownRequest(flood)], connections: 24 }
    ]
  })
}

const PARTS = { sun, limiter, auth, markdown, scale, sessions, memory, login, fairshare: fairShare, capacity: capacityOfOneReplica }
const asked = process.argv.slice(2)
// `compare REF` is asked for by name only: it needs the release to compare with.
const compareAt = asked.indexOf('compare')
const release = compareAt === -1 ? undefined : asked.splice(compareAt, 2)[1]
if (compareAt !== -1 && release === undefined) throw new Error('compare needs a git ref: npm run bench -- compare REF')
const unknown = asked.filter((part) => !(part in PARTS))
if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}`)
const started = performance.now()
const chosen = Object.entries(PARTS).filter(([name]) => asked.includes(name) || (asked.length === 0 && release === undefined))
if (release !== undefined) chosen.unshift(['compare', async () => { await compare(table, release) }])
for (const [name, part] of chosen) {
  // A part that fails is a failed row: the table of the others still prints.
  try {
    await part()
  } catch (error) {
    log(`${name}: ${String((error as Error).stack ?? error)}`)
    table.fail(`${name} part`, (error as Error).message ?? String(error))
  }
}
log(`bench: ${((performance.now() - started) / 60_000).toFixed(1)} min`)
table.print()
process.exitCode = table.failed ? 1 : 0
