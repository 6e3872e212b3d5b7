/**
 * Markdown benchmark, two parts in one run:
 *
 * 1. Pathological input, after cmark's test/pathological_tests.py and markdown-it's own: each
 *    category rendered by the pure renderer at 100 KiB and at 1 MiB, in a process of its own
 *    (see timeGrowthInChild and timeGrowthRounds); the growth ratio of the two times is ~10 when
 *    the work is linear (~100 when quadratic). The three slowest at 1 MiB are then timed again
 *    through POST /api/markdown/parse of the built app, whose render threads have the service's
 *    heap settings.
 * 2. Throughput of POST /api/markdown/parse on a ~5 KB README against a bare node:http server
 *    that only calls markdown-it (same options) on the same document: both servers run in
 *    child processes (this file, forked with an argument), autocannon loads them in turn
 *    from this process over loopback, alternating for five rounds (BENCH_ROUNDS); the ratio of their median rates
 *    and of their p99s. Then GET /health/live's latency while the service renders 1 MiB of
 *    the slowest pathological input.
 *
 *   npm run bench:markdown                    both parts (builds first: the route timings run dist/)
 *   npm run bench:markdown -- pathological    part 1 (MARKDOWN_BENCH_ONLY=<substring> for some)
 *   npm run bench:markdown -- throughput      part 2 (MARKDOWN_BENCH_SECONDS a round, default 5)
 *
 * `pathologicalCases` is also what test/lib/markdown.test.ts renders at ~100 KB, asserting a
 * structural property of each output rather than a time.
 */
import { fork } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { performance, PerformanceObserver } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { MAX_NESTING, renderSafeMarkdown } from '../lib/markdown.js'
import { pathologicalCases, README, type PathologicalCase } from '../test/markdown-corpus.js'
import { importBuiltApp } from './built-app.js'
import { autocannon, type AutocannonResult, type BenchRequest, describeRun, median, reportPort, startChild, THROUGHPUT_ROUNDS } from './harness.js'

const KiB = 1024
const MiB = 1024 * KiB

interface Timing { ms: number, gcMs: number }

/** The smaller of the two sizes each category is timed at; the larger is 1 MiB. */
const SMALL = 100 * KiB

let gcMs = 0
/** Lets the event loop turn so that the GC entries of the last render are counted. */
const settle = async (): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, 20)) }

/**
 * A full collection before each timing, so that no timing pays for the garbage of the ones
 * before it (the other size, earlier rounds): V8 marks and sweeps a large old generation
 * concurrently, and on two cores that slowed the renders after it. Measured when all categories
 * still shared one process: `a]` took 1.4 ms at 100 KiB and 25 ms at 1 MiB after other
 * categories, 2.3 and 19.8 ms alone.
 */
function collectEarlierGarbage (): void {
  const { gc } = globalThis as { gc?: () => void }
  if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:markdown does)')
  gc()
}

/** Bytes rendered at each size in each round, so that both sizes pay for the same volume of garbage. */
const VOLUME_PER_ROUND = 2 * 1024 * 1024
/** Fast categories render for at least this long per round at each size: a few milliseconds are mostly noise here. */
const MIN_MS_PER_ROUND = 250
/**
 * Rounds per category. This host's speed drifts by half from one second to the next, so each
 * round times the two sizes back to back and gives one ratio; the median round is kept.
 */
const ROUNDS = 5

/**
 * The mean time of back-to-back renders of `source` (after one warm-up), and the mean
 * garbage-collection time V8 reported during them. Not the best run: a 100 KiB render's
 * tokens fit in V8's young generation, so many small renders finish before any collection
 * and leave it to the next one; the best of them would leave out a cost every render shares,
 * while every 1 MiB render pays its own. Rendering the same volume at both sizes and taking
 * the mean counts that cost alike for both.
 */
async function timeRender (source: string): Promise<Timing> {
  const minRuns = Math.max(2, Math.round(VOLUME_PER_ROUND / source.length))
  renderSafeMarkdown(source)
  collectEarlierGarbage()
  await settle()
  gcMs = 0
  const start = performance.now()
  let runs = 0
  while (runs < minRuns || performance.now() - start < MIN_MS_PER_ROUND) {
    renderSafeMarkdown(source)
    runs++
  }
  const ms = performance.now() - start
  await settle()
  return { ms: ms / runs, gcMs: Math.min(gcMs, ms) / runs }
}

interface Growth {
  small: Timing
  large: Timing
  /** The median of the rounds' ratios, large over small. */
  ratio: number
  /** The lowest and the highest of the rounds' ratios. */
  ratioRange: [number, number]
  /** The same, of the times outside garbage collection. */
  ratioOutsideGc: number
}

/**
 * `small` and `large` timed in ROUNDS rounds, the order of the two swapped every round so that
 * a host that speeds up or slows down favours neither size. The times are the medians of the
 * rounds; the ratios are the medians of each round's own ratio, so that one slow moment spoils
 * one round's ratio, not the comparison of two medians taken at different moments.
 */
async function timeGrowthRounds (small: string, large: string): Promise<Growth> {
  const rounds: Array<{ small: Timing, large: Timing }> = []
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      const smallTiming = await timeRender(small)
      rounds.push({ small: smallTiming, large: await timeRender(large) })
    } else {
      const largeTiming = await timeRender(large)
      rounds.push({ small: await timeRender(small), large: largeTiming })
    }
  }
  const ratios = rounds.map(({ small, large }) => large.ms / small.ms)
  const medianTiming = (timings: Timing[]): Timing => ({ ms: median(timings.map(({ ms }) => ms)), gcMs: median(timings.map(({ gcMs }) => gcMs)) })
  return {
    small: medianTiming(rounds.map(({ small }) => small)),
    large: medianTiming(rounds.map(({ large }) => large)),
    ratio: median(ratios),
    ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    ratioOutsideGc: median(rounds.map(({ small, large }) => (large.ms - large.gcMs) / (small.ms - small.gcMs)))
  }
}

const README_GROWTH = 'README-like Markdown, for comparison'
const readmeOfSize = (size: number): string => README.repeat(Math.max(1, Math.floor(size / README.length)))

async function benchPathological (): Promise<void> {
  const only = process.env.MARKDOWN_BENCH_ONLY
  console.log(`Pathological input, pure renderer: mean time per render at ${SMALL / KiB} KiB and ${MiB / KiB} KiB, ` +
    `${VOLUME_PER_ROUND / MiB} MiB (and at least ${MIN_MS_PER_ROUND} ms) rendered back to back at each size per round;`)
  console.log(`${ROUNDS} rounds, the two sizes back to back in each (order swapped every round): times are the median rounds, "ratio" the median of the rounds' own ratios.`)
  console.log(`Each category runs in a new process, so that none inherits the heap an earlier one grew, with a ${TIMING_SEMI_SPACE_MB} MB semi-space (see TIMING_SEMI_SPACE_MB).`)
  console.log('"rounds" is the lowest and highest round ratio; "GC" the share of the 1 MiB time V8 reported as garbage collection; "w/o GC" the ratio of the times outside it.')
  console.log(`${'category'.padEnd(52)} ${'100 KiB ms'.padStart(10)} ${'1 MiB ms'.padStart(9)} ${'ratio'.padStart(6)} ${'rounds'.padStart(11)} ${'GC'.padStart(5)} ${'w/o GC'.padStart(7)}`)
  let worstRatio = { name: '', ratio: 0 }
  const large: Array<{ category: PathologicalCase, ms: number }> = []
  for (const category of pathologicalCases) {
    if (only !== undefined && !category.name.includes(only)) continue
    const { large: largeTime, ratio } = await timeGrowthInChild(category.name)
    if (ratio > worstRatio.ratio) worstRatio = { name: category.name, ratio }
    large.push({ category, ms: largeTime.ms })
  }
  const readme = await timeGrowthInChild(README_GROWTH)
  const slowest = large.sort((a, b) => b.ms - a.ms)
  console.log(`\nworst growth ratio: ${worstRatio.name}, ${worstRatio.ratio.toFixed(1)} (linear: 10, quadratic: 100; goal: well under 20)`)
  console.log(`README-like Markdown grew ${readme.ratio.toFixed(1)} times in the same run: what linear work measures on this machine now`)
  console.log(`slowest 1 MiB: ${slowest[0]?.category.name}, ${slowest[0]?.ms.toFixed(0)} ms (goal: under 2000 ms)`)
  console.log(`1 MiB of README-like Markdown: ${readme.large.ms.toFixed(0)} ms`)
  await timeThroughRoute(slowest.slice(0, ROUTE_CATEGORIES).map(({ category }) => category))
}

/**
 * Semi-space of V8's young generation in the timing processes: 1 MB, the smallest V8 takes, against
 * 16 MB by default. The young generation works like a cache: tokens that die before it fills
 * are nearly free, those that outlive it are copied twice (within it, then out to the old
 * generation). With the default, a 100 KiB render of emphasis delimiters (about 16 MB of tokens
 * alive until its paragraph is rendered) mostly fits and a 1 MiB render never does, so the ratio
 * measured the young generation's size, not growth: `_a ` repeated grew 13–19 times with
 * 50–60% of the 1 MiB time in garbage collection, 11 with a 4 MB semi-space, 20 with 64 MB, while
 * the time outside collection grew 10–11 times in each. With 1 MB, renders of both sizes outgrow
 * it. The route timings below run the service's own heap settings.
 */
const TIMING_SEMI_SPACE_MB = 1

/** Runs `timeGrowth` for the category named `name` (or README_GROWTH) in a child process of this file. */
async function timeGrowthInChild (name: string): Promise<Growth> {
  const child = fork(fileURLToPath(import.meta.url), ['time-growth', name], {
    execArgv: [...process.execArgv, `--max-semi-space-size=${TIMING_SEMI_SPACE_MB}`],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return await new Promise<Growth>((resolve, reject) => {
    child.once('message', (growth) => { resolve(growth as Growth) })
    child.once('exit', (code) => { reject(new Error(`timing ${name} exited with ${code}`)) })
  })
}

/** Times the Markdown of the category named `name` at both sizes and prints the table row. */
async function timeGrowth (name: string): Promise<Growth> {
  const generate = name === README_GROWTH ? readmeOfSize : pathologicalCases.find((category) => category.name === name)?.generate
  if (generate === undefined) throw new Error(`no category named ${name}`)
  const gcObserver = new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMs += entry.duration })
  gcObserver.observe({ entryTypes: ['gc'] })
  const growth = await timeGrowthRounds(generate(SMALL), generate(MiB))
  gcObserver.disconnect()
  const { small, large, ratio, ratioRange: [lowest, highest], ratioOutsideGc } = growth
  console.log(`${name.padEnd(52)} ${small.ms.toFixed(1).padStart(10)} ${large.ms.toFixed(1).padStart(9)} ` +
    `${ratio.toFixed(1).padStart(6)} ${`${lowest.toFixed(1)}–${highest.toFixed(1)}`.padStart(11)} ${`${(100 * large.gcMs / large.ms).toFixed(0)}%`.padStart(5)} ${ratioOutsideGc.toFixed(1).padStart(7)}`)
  return growth
}

/** How many of the slowest 1 MiB categories are timed again through the route. */
const ROUTE_CATEGORIES = 3
const ROUTE_REQUESTS = 3

/**
 * The slowest 1 MiB inputs once more, as the service renders them: POST /api/markdown/parse of
 * the built app, which renders in a worker thread with its own heap settings, JSON in and out.
 * The median of a few requests each, one at a time.
 */
async function timeThroughRoute (categories: PathologicalCase[]): Promise<void> {
  const app = await buildBenchApp({ BODY_LIMIT: String(8 * MiB) })
  try {
    console.log(`\nThe slowest at 1 MiB again, through POST /api/markdown/parse (render thread, JSON in and out), median of ${ROUTE_REQUESTS} requests (goal: under 2000 ms):`)
    for (const category of categories) {
      const payload = JSON.stringify({ markdown: category.generate(MiB) })
      const times: number[] = []
      for (let request = 0; request < ROUTE_REQUESTS; request++) {
        const start = performance.now()
        const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, payload })
        times.push(performance.now() - start)
        if (response.statusCode !== 200) throw new Error(`${category.name}: ${response.statusCode} ${response.body.slice(0, 200)}`)
      }
      console.log(`${category.name.padEnd(52)} ${median(times).toFixed(0).padStart(6)} ms`)
    }
  } finally {
    await app.close()
  }
}

/* Throughput: the servers run in child processes, the load generator here. */

const RENDERER_OPTIONS = { html: false, linkify: false, typographer: false, maxNesting: MAX_NESTING }

async function serveBareRenderer (): Promise<number> {
  const { default: MarkdownIt } = await import('markdown-it')
  const md = new MarkdownIt('commonmark', RENDERER_OPTIONS).enable(['table', 'strikethrough'])
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const { markdown } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { markdown: string }
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      response.end(JSON.stringify({ data: md.render(markdown) }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return typeof address === 'object' && address !== null ? address.port : 0
}

/** The built app with test/helper.js's testConfig (which needs a tap test for its directory), plus `env`. */
async function buildBenchApp (env: Record<string, string> = {}): Promise<FastifyInstance> {
  const { buildApp, loadConfig } = await importBuiltApp()
  const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
  return await buildApp(loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}`,
    JWT_SECRET: 'bench-secret-that-is-at-least-32-characters-long',
    ...env
  }))
}

async function serveApp (): Promise<number> {
  // Room for 1 MiB of Markdown in its JSON body, for the liveness probe's hostile render.
  const app = await buildBenchApp({ BODY_LIMIT: String(2 * MiB) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  return typeof address === 'object' && address !== null ? address.port : 0
}

const README_REQUEST: BenchRequest = {
  method: 'POST',
  path: '/api/markdown/parse',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ markdown: README })
}
const HEALTH_PROBE_INTERVAL_MS = 10

/** `GET /health/live` one request at a time until `until` settles: the latencies, in ms. */
async function probeLiveness (url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false
  void until.finally(() => { done = true })
  const latencies: number[] = []
  while (!done) {
    const started = performance.now()
    const response = await fetch(`${url}/health/live`)
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, HEALTH_PROBE_INTERVAL_MS))
  }
  return latencies
}

/** The slowest 1 MiB category, rendered through the service while a probe measures liveness. */
async function livenessDuringHostileRender (url: string): Promise<void> {
  const hostile = pathologicalCases.find(({ name }) => name.startsWith('lazy lines')) ?? pathologicalCases[0]
  if (hostile === undefined) throw new Error('no pathological case')
  const render = fetch(`${url}/api/markdown/parse`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ markdown: hostile.generate(MiB) })
  }).then(async (response) => {
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`the 1 MiB render answered ${response.status}`)
  })
  const started = performance.now()
  const latencies = (await Promise.all([probeLiveness(url, render), render]))[0].sort((a, b) => a - b)
  const percentile = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN).toFixed(1)
  console.log(`GET /health/live while 1 MiB of "${hostile.name}" renders (${(performance.now() - started).toFixed(0)} ms): ` +
    `${latencies.length} probes, p50 ${percentile(0.5)} ms, p99 ${percentile(0.99)} ms, max ${percentile(1)} ms (goal: p99 under 50 ms)`)
}

async function benchThroughput (): Promise<void> {
  const seconds = Number(process.env.MARKDOWN_BENCH_SECONDS ?? 5)
  console.log(`\nThroughput, ${(Buffer.byteLength(README) / KiB).toFixed(1)} KiB README, 10 connections, ` +
    `${THROUGHPUT_ROUNDS} × ${seconds} s each, servers alternating, loopback`)
  const thisFile = fileURLToPath(import.meta.url)
  const servers = { bare: await startChild(thisFile, ['serve-bare']), service: await startChild(thisFile, ['serve-app']) }
  try {
    const load = async (url: string, duration: number): Promise<AutocannonResult> =>
      await autocannon({ url, connections: 10, duration, requests: [README_REQUEST] })
    for (const server of Object.values(servers)) await load(server.url, 2)
    const results: Record<keyof typeof servers, AutocannonResult[]> = { bare: [], service: [] }
    for (let round = 1; round <= THROUGHPUT_ROUNDS; round++) {
      for (const name of round % 2 === 1 ? ['bare', 'service'] as const : ['service', 'bare'] as const) {
        const result = await load(servers[name].url, seconds)
        results[name].push(result)
        console.log(`round ${round} ${name.padEnd(8)} ${describeRun(result)}`)
      }
    }
    const rate = (name: keyof typeof servers) => median(results[name].map((r) => r.requests.average))
    const p99 = (name: keyof typeof servers) => median(results[name].map((r) => r.latency.p99))
    console.log(`bare node:http + markdown-it          ${rate('bare').toFixed(0).padStart(7)} req/s  p99 ${p99('bare').toFixed(1)} ms`)
    console.log(`Meridian POST /api/markdown/parse     ${rate('service').toFixed(0).padStart(7)} req/s  p99 ${p99('service').toFixed(1)} ms`)
    console.log(`ratio service / bare: ${(rate('service') / rate('bare')).toFixed(2)} (goal: at least 0.90); ` +
      `p99 service / bare: ${(p99('service') / Math.max(p99('bare'), 1)).toFixed(1)}× (goal: within 2×; a p99 under 1 ms counts as 1 ms)`)
    await livenessDuringHostileRender(servers.service.url)
  } finally {
    for (const server of Object.values(servers)) server.child.kill('SIGTERM')
  }
}

async function main (mode: string | undefined): Promise<void> {
  if (mode === 'serve-app' || mode === 'serve-bare') {
    reportPort(await (mode === 'serve-app' ? serveApp() : serveBareRenderer()))
    process.on('SIGTERM', () => process.exit(0))
    return
  }
  if (mode === 'time-growth') {
    const growth = await timeGrowth(process.argv[3] ?? '')
    const { send } = process
    if (send !== undefined) {
      await new Promise((resolve) => send.call(process, growth, resolve))
      process.disconnect()
    }
    return
  }
  if (mode === undefined || mode === 'pathological') await benchPathological()
  if (mode === undefined || mode === 'throughput') await benchThroughput()
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2])
}
