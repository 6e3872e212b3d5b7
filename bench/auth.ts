/**
 * The authenticated path, three parts in one run (each server in a child process of its own):
 *
 * 1. throughput: GET /api/user/list (page 1, a valid token) and POST /api/auth/refresh of the
 *    built app, on SQLite and on PostgreSQL, against Fastify answering fixed bodies of the same
 *    shapes; rounds alternate between the servers so that the machine's drift spreads over all,
 *    and each rate is the median of its rounds.
 * 2. scale: 1,000,000 seeded users on one replica; page 1, a middle page and the last page at 20
 *    connections each, with their p99 and the last page's rate against page 1's; then 40,000
 *    distinct pages spread over the whole list, so that none is served from the page cache.
 * 3. memory: resident memory of the service idle after start, then after each 100,000 mixed
 *    requests (sun, list, refresh, Markdown, health).
 *
 *   npm run bench:auth                             all three
 *   npm run bench:auth -- throughput|scale|memory  one part
 *   BENCH_DATABASE_URL=postgres://…                the PostgreSQL server (default: the local one;
 *                                                  BENCH_DATABASE_URL=none leaves it out)
 *   BENCH_SECONDS (5), BENCH_ROUNDS (5), BENCH_USERS (1000000), BENCH_MIXED_ROUNDS (3)
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import {
  autocannon, type AutocannonResult, type BenchRequest, type ChildServer, describeRun, median, portOf, reportPort,
  startChild, startFixedBodyServer, THROUGHPUT_ROUNDS
} from './harness.js'
import { importBuiltApp } from './built-app.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 10
const SCALE_USERS = Number(process.env.BENCH_USERS ?? 1_000_000)
const SCALE_CONNECTIONS = 20
const DISTINCT_PAGES = 40_000
const MIXED_REQUESTS = 100_000
const MIXED_ROUNDS = Number(process.env.BENCH_MIXED_ROUNDS ?? 3)
const BENCH_PASSWORD = 'bench-password'
const POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

// ---------------------------------------------------------------------------------------------
// Children.

const USER = { id: '1', name: 'Ada Lovelace', birthdate: '1815-12-10', gender: 'female', short_desc: 'Engineer who likes chess.', age: 210, online: true }
const FIXED_LIST = {
  meta: { count_total: 1001, count_loaded: 20, current_page: 1, total_pages: 51 },
  data: Array.from({ length: 20 }, (_, i) => ({ ...USER, id: String(i + 1) })),
  links: ['/api/user/list', '/api/user/list?page=2', '/api/user/list?page=3', '/api/user/list?page=4',
    '/api/user/list?page=5', '/api/user/list?page=6', '/api/user/list?page=51']
}
const FIXED_GRANT = {
  access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImFiY2RlZmdoaWprbG1ub3AifQ.eyJzdWIiOiIxIiwidG9rZW5fdXNlIjoiYWNjZXNzIiwidmVyIjowfQ.c2lnbmF0dXJlLW9mLXRoZS1yaWdodC1sZW5ndGgtZm9yLWFuLWhzMjU2',
  expires_in: 3600
}

async function serveFixed (): Promise<void> {
  reportPort(await startFixedBodyServer([
    { method: 'GET', url: '/api/user/list', body: FIXED_LIST },
    { method: 'POST', url: '/api/auth/refresh', body: FIXED_GRANT }
  ]))
}

/** The built app on `databaseUrl` with the bench user and `users` seeded users. */
async function serveService (databaseUrl: string, users: number): Promise<void> {
  const { buildApp, loadConfig } = await importBuiltApp()
  const { seedUsers } = await import(new URL('../dist/lib/seed-users.js', import.meta.url).href) as typeof import('../lib/seed-users.js')
  const { hashPassword } = await import(new URL('../dist/lib/passwords.js', import.meta.url).href) as typeof import('../lib/passwords.js')
  const app = await buildApp(loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'bench-secret-that-is-at-least-32-characters-long'
  }), { loginThrottle: { maxFailuresPerUsername: 1e9, maxFailuresPerAddress: 1e9 } })
  await app.ready()
  const passwordHash = await hashPassword(BENCH_PASSWORD)
  await app.store.add({ username: 'bench', passwordHash, name: 'Bench User', birthdate: '1990-01-01', gender: 'unspecified', shortDesc: '' })
  if (users > 0) await seedUsers(app.store, { count: users, passwordHash })
  await app.listen({ host: '127.0.0.1', port: 0 })
  reportPort(portOf(app.server))
}

// ---------------------------------------------------------------------------------------------
// The parent.

const thisFile = fileURLToPath(import.meta.url)

interface Service extends ChildServer { name: string, accessToken: string, refreshToken: string, close: () => Promise<void> }

/** A database of its own on the PostgreSQL server, dropped with the service; undefined if none answers. */
async function postgresDatabase (): Promise<{ url: string, drop: () => Promise<void> } | undefined> {
  if (POSTGRES_URL === 'none') return undefined
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await admin.connect()
  } catch (error) {
    console.log(`PostgreSQL at ${POSTGRES_URL} does not answer (${(error as Error).message}): its figures are left out`)
    return undefined
  }
  const name = `meridian_bench_${process.pid}_${Date.now()}`
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    url: url.href,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
}

async function startService (dialect: 'sqlite' | 'postgres', users: number): Promise<Service | undefined> {
  let databaseUrl: string
  let dropDatabase = async (): Promise<void> => {}
  if (dialect === 'sqlite') {
    const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
    databaseUrl = `sqlite:${join(directory, 'meridian.db')}`
    dropDatabase = async () => { rmSync(directory, { recursive: true, force: true }) }
  } else {
    const database = await postgresDatabase()
    if (database === undefined) return undefined
    databaseUrl = database.url
    dropDatabase = database.drop
  }
  const server = await startChild(thisFile, ['serve-service', databaseUrl, String(users)])
  const login = async () => await fetch(`${server.url}/api/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bench', password: BENCH_PASSWORD })
  })
  // Seeding a million users stalls the child's event loop for seconds, so its pressure check may
  // still answer 503 for a moment after it starts listening, as it would to any client.
  let response = await login()
  for (let attempt = 0; response.status === 503 && attempt < 60; attempt++) {
    await response.arrayBuffer()
    await new Promise((resolve) => setTimeout(resolve, 500))
    response = await login()
  }
  if (response.status !== 200) throw new Error(`bench login answered ${response.status}`)
  const tokens = await response.json() as { access_token: string, refresh_token: string }
  return {
    ...server,
    name: dialect,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    close: async () => {
      server.child.kill()
      await new Promise((resolve) => server.child.once('exit', resolve))
      await dropDatabase()
    }
  }
}

const listRequest = (service: Pick<Service, 'accessToken'>, page = 1): BenchRequest =>
  ({ method: 'GET', path: `/api/user/list?access_token=${service.accessToken}${page === 1 ? '' : `&page=${page}`}` })
const refreshRequest = (service: Pick<Service, 'refreshToken'>): BenchRequest => ({
  method: 'POST',
  path: '/api/auth/refresh',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ refresh_token: service.refreshToken })
})

async function load (url: string, requests: BenchRequest[], seconds: number, connections = CONNECTIONS): Promise<AutocannonResult> {
  return await autocannon({ url, connections, duration: seconds, requests })
}

async function benchThroughput (): Promise<void> {
  const fixed = await startChild(thisFile, ['serve-fixed'])
  const services = (await Promise.all([startService('sqlite', 1000), startService('postgres', 1000)])).filter((s) => s !== undefined)
  try {
    // The fixed-body server gets the very requests the services get: same URL, token and body.
    const routes = [
      { name: 'GET /api/user/list', request: (s: Service) => listRequest(s) },
      { name: 'POST /api/auth/refresh', request: (s: Service) => refreshRequest(s) }
    ]
    const [first] = services
    if (first === undefined) throw new Error('no service started')
    console.log(`\nThroughput of the authenticated path: 1,001 users, ${CONNECTIONS} connections, ${THROUGHPUT_ROUNDS} × ${SECONDS} s per server and route, loopback`)
    const ratios: string[] = []
    for (const route of routes) {
      const servers = [{ name: 'fixed', url: fixed.url, request: route.request(first) },
        ...services.map((s) => ({ name: s.name, url: s.url, request: route.request(s) }))]
      for (const server of servers) await load(server.url, [server.request], 2)
      const rates = new Map<string, number[]>(servers.map((s) => [s.name, []]))
      for (let round = 1; round <= THROUGHPUT_ROUNDS; round++) {
        for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
          const result = await load(server.url, [server.request], SECONDS)
          rates.get(server.name)?.push(result.requests.average)
          console.log(`${route.name.padEnd(24)} round ${round} ${server.name.padEnd(8)} ${describeRun(result)}`)
        }
      }
      const fixedRate = median(rates.get('fixed') ?? [])
      for (const service of services) {
        ratios.push(`${route.name.padEnd(24)} ${service.name.padEnd(8)} / fixed-body Fastify: ${(median(rates.get(service.name) ?? []) / fixedRate).toFixed(2)}` +
          (service.name === 'sqlite' ? ' (goal: at least 0.50)' : ''))
      }
    }
    console.log(ratios.join('\n'))
  } finally {
    fixed.child.kill()
    for (const service of services) await service.close()
  }
}

async function benchScale (): Promise<void> {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const started = performance.now()
    const service = await startService(dialect, SCALE_USERS - 1)
    if (service === undefined) continue
    try {
      const users = SCALE_USERS
      const lastPage = Math.ceil(users / 20)
      console.log(`\n${dialect}: ${users.toLocaleString('en')} users (seeded in ${((performance.now() - started) / 1000).toFixed(1)} s), ` +
        `${SCALE_CONNECTIONS} connections, ${SECONDS} s per page (goal: p99 under 20 ms; last page at least 0.5 of page 1)`)
      const rates: number[] = []
      for (const page of [1, Math.ceil(lastPage / 2), lastPage]) {
        const request = listRequest(service, page)
        await load(service.url, [request], 2, SCALE_CONNECTIONS)
        const result = await load(service.url, [request], SECONDS, SCALE_CONNECTIONS)
        rates.push(result.requests.average)
        console.log(`page ${String(page).padEnd(7)} ${describeRun(result)}`)
      }
      console.log(`last page / page 1: ${((rates[2] ?? 0) / (rates[0] ?? 1)).toFixed(2)}`)
      // A page is reused for up to a second: this many distinct pages are each read from the database.
      // One request whose page moves on at every send, across all connections, so that no two
      // sends within a pass ask for the same page. (A list of 40,000 requests would be built by
      // autocannon for each connection before its first send: seconds on a small machine, during
      // which the first responses wait unread and count as late or timed out.)
      let sent = 0
      const pageAt = (i: number) => 1 + Math.floor((i % DISTINCT_PAGES) * (lastPage - 1) / (DISTINCT_PAGES - 1))
      const spread: BenchRequest = { ...listRequest(service), setupRequest: (request) => ({ ...request, path: listRequest(service, pageAt(sent++)).path }) }
      const uncached = await load(service.url, [spread], SECONDS, SCALE_CONNECTIONS)
      console.log(`${DISTINCT_PAGES.toLocaleString('en')} distinct pages from first to last, none reused: ${describeRun(uncached).trim()}`)
    } finally {
      await service.close()
    }
  }
}

/** A free port on loopback, for a server that cannot report the one it was given. */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = portOf(server)
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** VmRSS of a process, in MB. */
const residentMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

/**
 * The server exactly as `npm start` runs it (no tsx, no bench code in the process), with a bench
 * user and 1,000 seeded users added through the CLI first.
 */
async function benchMemory (): Promise<void> {
  const { README } = await import('../test/markdown-corpus.js')
  const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
  const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
  const port = await freePort()
  const env = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}` }
  const runCli = (args: string[]): void => { execFileSync(process.execPath, [cli, ...args], { env, input: BENCH_PASSWORD, stdio: ['pipe', 'ignore', 'inherit'] }) }
  runCli(['user', 'add', '--username', 'bench'])
  runCli(['user', 'seed', '--count', '1000'])
  const server = spawn(process.execPath, [cli, 'serve'], { env, stdio: 'inherit' })
  try {
    const url = `http://127.0.0.1:${port}`
    for (let attempt = 0; !(await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)); attempt++) {
      if (attempt > 100) throw new Error('the server did not become ready')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const pid = server.pid ?? 0
    console.log('\nResident memory of `meridian serve` (SQLite, 1,001 users; goal: idle under 120 MB, flat under load)')
    // Once idle for 10 s the replica scavenges, and 10 s later collects in full (plugins/idle-collection.ts).
    let sinceStart = 0
    for (const [seconds, when] of [[2, 'before its first idle interval ends'], [15, 'past its first idle interval, which ends in a scavenge']] as const) {
      await new Promise((resolve) => setTimeout(resolve, (seconds - sinceStart) * 1000))
      sinceStart = seconds
      console.log(`idle ${seconds} s after start (${when}): ${residentMb(pid).toFixed(0)} MB`)
    }
    const response = await fetch(`${url}/api/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bench', password: BENCH_PASSWORD })
    })
    const tokens = await response.json() as { access_token: string, refresh_token: string }
    const service = { accessToken: tokens.access_token, refreshToken: tokens.refresh_token }
    console.log(`after one login (argon2 takes 19 MiB): ${residentMb(pid).toFixed(0)} MB`)
    const mixed: BenchRequest[] = [
      { method: 'GET', path: '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015' },
      listRequest(service),
      refreshRequest(service),
      listRequest(service, 7),
      { method: 'GET', path: '/api/date/suninfo?timestamp=1718884800&latitude=60.5&longitude=-0.25' },
      { method: 'POST', path: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ markdown: README }) },
      { method: 'GET', path: '/health/live' }
    ]
    for (let round = 1; round <= MIXED_ROUNDS; round++) {
      const result = await autocannon({ url, connections: CONNECTIONS, amount: MIXED_REQUESTS, requests: mixed })
      console.log(`after ${(round * MIXED_REQUESTS).toLocaleString('en')} mixed requests: ${residentMb(pid).toFixed(0)} MB (${describeRun(result).trim()})`)
    }
    // The first 10 s check after the load still sees it as work: the scavenge comes within 20 s,
    // the full collection within 30 s.
    let sinceLoad = 0
    for (const seconds of [2, 22, 32]) {
      await new Promise((resolve) => setTimeout(resolve, (seconds - sinceLoad) * 1000))
      sinceLoad = seconds
      console.log(`idle again ${seconds} s later: ${residentMb(pid).toFixed(0)} MB`)
    }
  } finally {
    server.kill()
    await new Promise((resolve) => server.once('exit', resolve))
    rmSync(directory, { recursive: true, force: true })
  }
}

const [role, ...args] = process.argv.slice(2)
if (role === 'serve-fixed') {
  await serveFixed()
} else if (role === 'serve-service') {
  await serveService(args[0] ?? '', Number(args[1]))
} else {
  if (role === undefined || role === 'throughput') await benchThroughput()
  if (role === undefined || role === 'scale') await benchScale()
  if (role === undefined || role === 'memory') await benchMemory()
}
