/**
 * Throughput of GET /api/date/suninfo against two yardsticks, on the same random queries:
 *
 *   service      the real Meridian app (buildApp, configured as the test helper does)
 *   search       a bare node:http server answering the obvious way: astronomy-engine's
 *                SearchHourAngle for transit and eight SearchAltitude calls per request
 *   fixed        a Fastify server answering a fixed body of the same shape
 *
 * Each server runs in its own child process (this file, forked with `serve <kind>`) so that it
 * does not share a core with autocannon. Rounds alternate between the servers so that drift in
 * the machine's load spreads over all three; each figure is the median of the rounds, so one round
 * that the host spoiled does not move it. Exits non-zero only when something crashes.
 *
 *   npx tsx bench/sun.ts [--duration 5] [--rounds 5] [--connections 10]
 *   BENCH_LOG_LEVEL=info npx tsx bench/sun.ts     # the service logging as in production (to /dev/null)
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, createWriteStream } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { importBuiltApp } from './built-app.js'
import { type AutocannonClient, type AutocannonResult, type BenchRequest, autocannon, median, portOf, reportPort, startChild, startFixedBodyServer, THROUGHPUT_ROUNDS } from './harness.js'

const require = createRequire(import.meta.url)

// ---------------------------------------------------------------------------------------------
// The servers.

type ServerKind = 'service' | 'search' | 'fixed'
const SERVER_KINDS: readonly ServerKind[] = ['service', 'search', 'fixed']
const DESCRIPTIONS: Record<ServerKind, string> = {
  service: 'Meridian app, GET /api/date/suninfo',
  search: 'node:http + SearchHourAngle + 8 × SearchAltitude',
  fixed: 'Fastify, fixed body of the same shape'
}

const SECONDS_PER_DAY = 86_400
/** The contract's thresholds for the Sun's centre, in the order the search server answers them. */
const THRESHOLDS = [
  ['sunrise', 'sunset', -50 / 60],
  ['civil_twilight_begin', 'civil_twilight_end', -6],
  ['nautical_twilight_begin', 'nautical_twilight_end', -12],
  ['astronomical_twilight_begin', 'astronomical_twilight_end', -18]
] as const

const FIXED_BODY = {
  meta: { timestamp: 1700000000, latitude: 48.8566, longitude: 2.3522 },
  data: {
    sunrise: 1699987283,
    sunset: 1700021215,
    transit: 1700004249,
    civil_twilight_begin: 1699985224,
    civil_twilight_end: 1700023274,
    nautical_twilight_begin: 1699982904,
    nautical_twilight_end: 1700025594,
    astronomical_twilight_begin: 1699980641,
    astronomical_twilight_end: 1700027857
  }
}

/** Sun events the obvious way: each one a search of astronomy-engine inside the local mean day. */
function searchedSunEvents (timestamp: number, latitude: number, longitude: number): Record<string, number | null> {
  const astronomy = require('astronomy-engine') as typeof import('astronomy-engine')
  const offset = longitude * (SECONDS_PER_DAY / 360)
  const start = Math.floor((timestamp + offset) / SECONDS_PER_DAY) * SECONDS_PER_DAY - offset
  const end = start + SECONDS_PER_DAY
  const observer = new astronomy.Observer(latitude, longitude, 0)
  const startTime = astronomy.MakeTime(new Date(start * 1000))
  const unix = (time: { date: Date }): number => time.date.getTime() / 1000
  const transit = unix(astronomy.SearchHourAngle(astronomy.Body.Sun, observer, 0, startTime, 1).time)
  const inDay = (time: { date: Date } | null, from: number, to: number): number | null => {
    if (time === null) return null
    const seconds = unix(time)
    return seconds >= from && seconds < to ? Math.round(seconds) : null
  }
  const events: Record<string, number | null> = { transit: transit < end ? Math.round(transit) : null }
  const transitTime = astronomy.MakeTime(new Date(transit * 1000))
  for (const [morning, evening, altitude] of THRESHOLDS) {
    const rising = astronomy.SearchAltitude(astronomy.Body.Sun, observer, +1, startTime, (transit - start) / SECONDS_PER_DAY, altitude)
    const setting = astronomy.SearchAltitude(astronomy.Body.Sun, observer, -1, transitTime, (end - transit) / SECONDS_PER_DAY, altitude)
    events[morning] = inDay(rising, start, transit)
    events[evening] = inDay(setting, transit, end)
  }
  return events
}

async function startSearchServer (): Promise<number> {
  const server = createServer((request, response) => {
    const params = new URL(request.url ?? '/', 'http://localhost').searchParams
    const timestamp = Number(params.get('timestamp'))
    const latitude = Number(params.get('latitude'))
    const longitude = Number(params.get('longitude'))
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
      response.end(JSON.stringify(body))
    }
    if (!Number.isInteger(timestamp) || !(Math.abs(latitude) <= 90) || !(Math.abs(longitude) <= 180)) {
      send(400, { error: { code: 400, message: 'Invalid query' } })
      return
    }
    try {
      send(200, { meta: { timestamp, latitude, longitude }, data: searchedSunEvents(timestamp, latitude, longitude) })
    } catch {
      // astronomy-engine's searches throw in rare polar cases; a baseline still answers.
      send(500, { error: { code: 500, message: 'Internal server error' } })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return portOf(server)
}

async function startFixedServer (): Promise<number> {
  return await startFixedBodyServer([{ method: 'GET', url: '/api/date/suninfo', body: FIXED_BODY }])
}

async function startService (): Promise<number> {
  const { buildApp, loadConfig } = await importBuiltApp()
  const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }))
  const logLevel = process.env.BENCH_LOG_LEVEL ?? 'silent'
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: logLevel,
    DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}`,
    JWT_SECRET: 'bench-secret-that-is-at-least-32-characters-long'
  })
  const app = await buildApp(config, logLevel === 'silent' ? {} : { logStream: createWriteStream('/dev/null') })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return portOf(app.server)
}

/** Child process: start one server and tell the parent its port. */
async function serve (kind: ServerKind): Promise<void> {
  const start = { service: startService, search: startSearchServer, fixed: startFixedServer }[kind]
  reportPort(await start())
}

// ---------------------------------------------------------------------------------------------
// The parent: queries, children, rounds, figures.

/** A small seeded generator, so that every run sends the same queries. */
function mulberry32 (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), state | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
}

const QUERY_COUNT = 4000
const RANDOM_SEED = 20240620
const FIRST_TIMESTAMP = Date.UTC(1950, 0, 1) / 1000
const LAST_TIMESTAMP = Date.UTC(2100, 11, 31, 23, 59, 59) / 1000
const MAX_LATITUDE = 65
const WARM_UP_SECONDS = 3

function randomQueries (): BenchRequest[] {
  const random = mulberry32(RANDOM_SEED)
  return Array.from({ length: QUERY_COUNT }, () => {
    const timestamp = Math.floor(FIRST_TIMESTAMP + random() * (LAST_TIMESTAMP - FIRST_TIMESTAMP))
    const latitude = ((random() * 2 - 1) * MAX_LATITUDE).toFixed(4)
    const longitude = ((random() * 2 - 1) * 180).toFixed(4)
    return { method: 'GET', path: `/api/date/suninfo?timestamp=${timestamp}&latitude=${latitude}&longitude=${longitude}` }
  })
}

/** Every connection walks the queries from its own offset, so they do not move in lockstep. */
function staggered (requests: BenchRequest[], connections: number): (client: AutocannonClient) => void {
  let next = 0
  return (client) => {
    const offset = Math.floor((next++ % connections) * requests.length / connections)
    client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)])
  }
}

async function fetchJson (port: number, path: string): Promise<{ status: number, body: { data?: Record<string, number | null> } }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: response.status, body: await response.json() as { data?: Record<string, number | null> } }
}

/** The service and the search baseline should agree: a benchmark of wrong answers proves nothing. */
async function crossCheck (ports: Record<ServerKind, number>, requests: BenchRequest[]): Promise<void> {
  let largest = 0
  let nullMismatches = 0
  const sample = requests.slice(0, 100)
  for (const { path } of sample) {
    const [service, search] = await Promise.all([fetchJson(ports.service, path), fetchJson(ports.search, path)])
    if (service.status !== 200) throw new Error(`the service answered ${service.status} to ${path}`)
    if (search.status !== 200) continue
    for (const [field, expected] of Object.entries(search.body.data ?? {})) {
      const actual = service.body.data?.[field] ?? null
      if ((actual === null) !== (expected === null)) nullMismatches++
      else if (actual !== null && expected !== null) largest = Math.max(largest, Math.abs(actual - expected))
    }
  }
  console.log(`cross-check on ${sample.length} queries: service vs searches, largest difference ${largest} s, ` +
    `null mismatches ${nullMismatches}`)
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: String(THROUGHPUT_ROUNDS) },
      connections: { type: 'string', default: '10' }
    }
  })
  const duration = Number(values.duration)
  const rounds = Number(values.rounds)
  const connections = Number(values.connections)
  const requests = randomQueries()

  const children: ChildProcess[] = []
  const ports = {} as Record<ServerKind, number>
  try {
    for (const kind of SERVER_KINDS) {
      const { child, port } = await startChild(fileURLToPath(import.meta.url), ['serve', kind])
      children.push(child)
      ports[kind] = port
    }
    await crossCheck(ports, requests)

    const run = async (kind: ServerKind, seconds: number): Promise<AutocannonResult> => {
      const result = await autocannon({
        url: `http://127.0.0.1:${ports[kind]}`,
        connections,
        duration: seconds,
        requests,
        setupClient: staggered(requests, connections)
      })
      if (result.errors > 0 || result.timeouts > 0) {
        console.log(`  ${kind}: ${result.errors} errors, ${result.timeouts} timeouts`)
      }
      return result
    }

    console.log(`warming up ${WARM_UP_SECONDS} s each (JIT, the service's ephemeris cache)`)
    for (const kind of SERVER_KINDS) await run(kind, WARM_UP_SECONDS)

    const rates: Record<ServerKind, number[]> = { service: [], search: [], fixed: [] }
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? SERVER_KINDS : [...SERVER_KINDS].reverse()
      for (const kind of order) {
        const result = await run(kind, duration)
        rates[kind].push(result.requests.average)
        console.log(`round ${round} ${kind.padEnd(8)} ${result.requests.average.toFixed(0).padStart(7)} req/s ` +
          `p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms non-2xx ${result.non2xx}`)
      }
    }

    console.log(`\n${QUERY_COUNT} random queries (latitude ±${MAX_LATITUDE}°, any longitude, 1950–2100), ` +
      `${connections} connections, ${rounds} × ${duration} s per server, loopback`)
    for (const kind of SERVER_KINDS) {
      console.log(`${kind.padEnd(8)} ${median(rates[kind]).toFixed(0).padStart(7)} req/s  ${DESCRIPTIONS[kind]}`)
    }
    const serviceRate = median(rates.service)
    console.log(`service / search : ${(serviceRate / median(rates.search)).toFixed(1)}× (goal ≥ 5×)`)
    console.log(`service / fixed  : ${(100 * serviceRate / median(rates.fixed)).toFixed(0)}% (goal ≥ 40%)`)
  } finally {
    for (const child of children) child.kill()
  }
}

const [role, kind] = process.argv.slice(2)
if (role === 'serve') {
  if (!SERVER_KINDS.includes(kind as ServerKind)) throw new Error(`unknown server kind ${String(kind)}`)
  await serve(kind as ServerKind)
} else {
  await main()
}
