/**
 * The one harness of the benchmark: autocannon, servers in child processes (bench/servers.ts, so
 * that none shares a process with the load generator), alternating rate comparisons, a liveness
 * probe, and the table with its floors.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { Floor } from './floors.js'

const require = createRequire(import.meta.url)

export interface BenchRequest {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
  /** Called before each send: the request to send instead. */
  setupRequest?: (request: BenchRequest) => BenchRequest
}
export interface AutocannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number, max: number }
  non2xx: number
  /** Answers by status code. */
  statusCodeStats: Record<string, { count: number }>
  errors: number
  timeouts: number
}
export interface LoadOptions {
  url: string
  requests: BenchRequest[]
  connections?: number
  duration?: number
  amount?: number
  setupClient?: (client: { setRequests: (requests: BenchRequest[]) => void }) => void
}

/** autocannon (it ships no types); 10 connections unless told. */
export async function load (options: LoadOptions): Promise<AutocannonResult> {
  const run = require('autocannon') as (options: LoadOptions) => Promise<AutocannonResult>
  const result = await run({ connections: 10, ...options })
  if (result.errors + result.timeouts > 0) log(`  ${options.url}: ${result.errors} errors, ${result.timeouts} timeouts`)
  return result
}

/** Progress goes to standard error; standard output carries the table. */
export const log = (line: string): void => { process.stderr.write(`${line}\n`) }

export const JSON_HEADERS = { 'content-type': 'application/json' }

/** A server in a child process: bench/servers.ts started as `kind` with `args`. */
export interface ChildServer { url: string, child: ChildProcess, stop: () => Promise<void> }

export async function startServer (kind: string, ...args: string[]): Promise<ChildServer> {
  return await startServerWithNodeArgs([], kind, ...args)
}

/** startServer, with more arguments for Node (a profiler's). */
export async function startServerWithNodeArgs (nodeArgs: string[], kind: string, ...args: string[]): Promise<ChildServer> {
  // Standard output is a pipe the harness drains, as a container runtime's is: a server that logs
  // pays for its lines as it would in production, and the table stays clean.
  const child = fork(fileURLToPath(new URL('./servers.ts', import.meta.url)), [kind, ...args], { execArgv: [...process.execArgv, ...nodeArgs], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  child.stdout?.resume()
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => { resolve((message as { port: number }).port) })
    child.once('exit', (code) => { reject(new Error(`${kind} server exited (${String(code)}) before listening`)) })
  })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill()
    await exited
  }
  return { url: `http://127.0.0.1:${port}`, child, stop }
}

export interface Rounds { rounds: number, seconds: number }

/**
 * Alternating rounds per comparison (BENCH_ROUNDS) of BENCH_SECONDS each when set, else `defaults`. Nine by default,
 * because on a shared 2-core host a round's rate can move by a quarter: over five rounds the Markdown ratio read 0.87
 * in one run and 1.05 over eleven in the next, with nothing changed between them.
 */
export const benchRounds = (defaults: Rounds = { rounds: 9, seconds: 4 }): Rounds => ({
  rounds: Number(process.env.BENCH_ROUNDS ?? defaults.rounds),
  seconds: Number(process.env.BENCH_SECONDS ?? defaults.seconds)
})

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

export interface Contender {
  name: string
  url: string
  requests: BenchRequest[]
  connections?: number
  setupClient?: LoadOptions['setupClient']
  /** The server's process, whose CPU time an answer is measured (medianRatesAndCpu). */
  pid?: number
}

/**
 * Each contender's median rate over BENCH_ROUNDS rounds, the order reversed every round so that a host
 * that speeds up or slows down favours none; one round the host spoiled does not move a median.
 */
export async function medianRates (contenders: Contender[]): Promise<Record<string, number>> {
  return (await alternatingRounds(contenders, benchRounds())).rates
}

/**
 * As medianRates, and each contender's median CPU time of its server (`pid`, else the contender's own; every thread)
 * per answer, in µs: what a request costs the server whatever the load generator beside it takes from the host, which
 * moves rates far more.
 */
export async function medianRatesAndCpu (contenders: Contender[], pid?: number, rounds = benchRounds()): Promise<RoundFigures> {
  return await alternatingRounds(contenders.map((contender) => ({ ...contender, pid: pid ?? contender.pid })), rounds)
}

/** Each contender's medians, and its figure of every round in order, for ratios taken round by round. */
export interface RoundFigures {
  rates: Record<string, number>
  cpuMicrosPerAnswer: Record<string, number>
  rounds: { rates: Record<string, number[]>, cpuMicrosPerAnswer: Record<string, number[]> }
}

/**
 * Rounds over several processes of the same servers: each set of contenders (the same names, other processes) runs
 * its share of the rounds in turn, and each name keeps its figures of every set. Two processes of one build differed
 * by 18 % in CPU an answer for their whole life here (bench/compare.ts): one process a contender compares instances.
 */
export async function roundsOverProcessSets (sets: readonly Contender[][], rounds = benchRounds()): Promise<RoundFigures['rounds']> {
  const perSet = { ...rounds, rounds: Math.ceil(rounds.rounds / sets.length) }
  const rates: Record<string, number[]> = {}
  const cpuMicrosPerAnswer: Record<string, number[]> = {}
  for (const set of sets) {
    const { rounds: figures } = await alternatingRounds(set, perSet)
    for (const [name, values] of Object.entries(figures.rates)) (rates[name] ??= []).push(...values)
    for (const [name, values] of Object.entries(figures.cpuMicrosPerAnswer)) (cpuMicrosPerAnswer[name] ??= []).push(...values)
  }
  return { rates, cpuMicrosPerAnswer }
}

/**
 * The median over the rounds of `a`'s figure ÷ `b`'s in the same round. Neighbours in time share the host's mood,
 * which here moves a server's figure from one round to the next by up to half: the ratio of medians carries that
 * drift, the median of each round's ratio does not.
 */
export const medianRoundRatio = (a: readonly number[], b: readonly number[]): number => median(a.map((value, round) => value / (b[round] ?? NaN)))

async function alternatingRounds (contenders: Contender[], { rounds: roundCount, seconds }: Rounds): Promise<RoundFigures> {
  const run = async (contender: Contender, duration: number): Promise<AutocannonResult> => await load({ ...contender, duration })
  for (const contender of contenders) await run(contender, 2)
  const rates: Record<string, number[]> = Object.fromEntries(contenders.map(({ name }) => [name, []]))
  const cpu: Record<string, number[]> = Object.fromEntries(contenders.map(({ name }) => [name, []]))
  for (let round = 1; round <= roundCount; round++) {
    for (const contender of round % 2 === 1 ? contenders : [...contenders].reverse()) {
      const { pid } = contender
      const cpuBefore = pid === undefined ? 0 : processCpuSeconds(pid)
      const result = await run(contender, seconds)
      const cpuMicros = pid === undefined ? undefined : 1e6 * (processCpuSeconds(pid) - cpuBefore) / result.requests.total
      rates[contender.name]?.push(result.requests.average)
      if (cpuMicros !== undefined) cpu[contender.name]?.push(cpuMicros)
      log(`  round ${round} ${contender.name.padEnd(28)} ${result.requests.average.toFixed(0).padStart(6)} req/s p99 ${result.latency.p99} ms non-2xx ${result.non2xx}` +
        (cpuMicros === undefined ? '' : ` ${cpuMicros.toFixed(1)} µs CPU an answer`))
    }
  }
  const medians = (values: Record<string, number[]>): Record<string, number> => Object.fromEntries(Object.entries(values).map(([name, list]) => [name, median(list)]))
  return { rates: medians(rates), cpuMicrosPerAnswer: medians(cpu), rounds: { rates, cpuMicrosPerAnswer: cpu } }
}

const CLOCK_TICKS_PER_SECOND = 100

/** CPU seconds `pid` has used, all its threads, user and system, from /proc (Linux only). */
export function processCpuSeconds (pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
}

/** The value at fraction `p` of sorted `values`. */
export const percentile = (values: readonly number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN

/** GET /health/live one request at a time, every 10 ms, until `until` settles: the latencies in ms. */
export async function probeLiveness (url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false
  void until.finally(() => { done = true }).catch(() => {})
  const latencies: number[] = []
  while (!done) {
    const started = performance.now()
    await (await fetch(`${url}/health/live`)).arrayBuffer()
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return latencies
}

interface Row { check: string, figure: string, bound: string, verdict: 'ok' | 'FAIL' | '' }

/** The one table: each check, its figure, its bound, and whether the figure is within it. */
export class Table {
  readonly #rows: Row[] = []

  /** A figure with a floor: formatted by `format`, failed when past the bound. */
  guard (check: string, value: number, floor: Floor, format: (value: number) => string): void {
    const within = 'atLeast' in floor ? value >= floor.atLeast : value < floor.below
    const bound = 'atLeast' in floor ? `≥ ${format(floor.atLeast)}` : `< ${format(floor.below)}`
    this.#rows.push({ check, figure: format(value), bound, verdict: within ? 'ok' : 'FAIL' })
  }

  /** A check that could not be made (its part failed): a failure, with the reason as its figure. */
  fail (check: string, reason: string): void {
    this.#rows.push({ check, figure: reason, bound: '', verdict: 'FAIL' })
  }

  /** A figure printed for the reader, with no floor. */
  note (check: string, figure: string): void {
    this.#rows.push({ check, figure, bound: '', verdict: '' })
  }

  get failed (): boolean { return this.#rows.some(({ verdict }) => verdict === 'FAIL') }

  print (): void {
    const width = Math.max(...this.#rows.map(({ check }) => check.length))
    const figureWidth = Math.max(6, ...this.#rows.map(({ figure }) => figure.length))
    const boundWidth = Math.max(5, ...this.#rows.map(({ bound }) => bound.length))
    const line = (check: string, figure: string, bound: string, verdict: string): string =>
      `| ${check.padEnd(width)} | ${figure.padStart(figureWidth)} | ${bound.padEnd(boundWidth)} | ${verdict.padEnd(7)} |`
    console.log(line('check', 'figure', 'floor', 'verdict'))
    console.log(`|${'-'.repeat(width + 2)}|${'-'.repeat(figureWidth + 2)}|${'-'.repeat(boundWidth + 2)}|---------|`)
    for (const { check, figure, bound, verdict } of this.#rows) console.log(line(check, figure, bound, verdict))
  }
}

export const ratio = (value: number): string => value.toFixed(2)
export const times = (value: number): string => `${value.toFixed(1)}×`
export const ms = (value: number): string => `${Number(value.toFixed(1))} ms`
export const percent = (value: number): string => `${(100 * value).toFixed(0)}%`

/**
 * Every server on the first core, this process (autocannon) on the second: on two cores a client that shares the
 * server's core moves a round's figures by a quarter (the rounds of docs/performance.md, "Against the last release").
 */
export function pinServersAwayFromLoad (servers: readonly ChildServer[]): void {
  for (const server of servers) execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '0', String(server.child.pid)], { stdio: 'ignore' })
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '1', String(process.pid)], { stdio: 'ignore' })
}
