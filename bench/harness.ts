/**
 * What the throughput benchmarks share: autocannon's types (it ships none), servers in child
 * processes of their own (so that none shares a core with autocannon), and the fixed-body Fastify
 * server every ratio is measured against.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

const require = createRequire(import.meta.url)

export interface BenchRequest {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
  /** Called before each send: the request to send instead (autocannon builds it then, not up front). */
  setupRequest?: (request: BenchRequest) => BenchRequest
}
export interface AutocannonClient { setRequests: (requests: BenchRequest[]) => void }
export interface AutocannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number, max: number }
  non2xx: number
  errors: number
  timeouts: number
}
export interface AutocannonOptions {
  url: string
  connections: number
  duration?: number
  amount?: number
  requests: BenchRequest[]
  setupClient?: (client: AutocannonClient) => void
}

export async function autocannon (options: AutocannonOptions): Promise<AutocannonResult> {
  const run = require('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>
  return await run(options)
}

/** One line of figures for a load run. */
export function describeRun (result: AutocannonResult): string {
  const problems = result.errors + result.timeouts > 0 ? ` errors ${result.errors} timeouts ${result.timeouts}` : ''
  return `${result.requests.average.toFixed(0).padStart(7)} req/s p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms ` +
    `non-2xx ${result.non2xx}${problems}`
}

/** A server in a child process running `file` with `args`; it sends `{ port }` once listening. */
export interface ChildServer { child: ChildProcess, port: number, url: string }

export async function startChild (file: string, args: string[], execArgv = process.execArgv): Promise<ChildServer> {
  const child = fork(file, args, { execArgv })
  const port = await new Promise<number>((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      const port = (message as { port?: unknown }).port
      if (typeof port === 'number') { child.off('message', onMessage); resolve(port) }
    }
    child.on('message', onMessage)
    child.once('exit', (code) => { reject(new Error(`${args.join(' ')} exited (${String(code)}) before listening`)) })
  })
  return { child, port, url: `http://127.0.0.1:${port}` }
}

/** In a child: tell the parent the port, and leave with it. */
export function reportPort (port: number): void {
  process.send?.({ port })
  process.on('disconnect', () => process.exit(0))
}

export function portOf (server: { address: () => AddressInfo | string | null }): number {
  return (server.address() as AddressInfo).port
}

/** Fastify answering fixed bodies: the yardstick for what a route costs on top of Fastify itself. */
export async function startFixedBodyServer (routes: Array<{ method: 'GET' | 'POST', url: string, body: unknown }>): Promise<number> {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  for (const { method, url, body } of routes) app.route({ method, url, handler: async () => body })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return portOf(app.server)
}

/**
 * Alternating rounds per throughput comparison (BENCH_ROUNDS overrides). Five, not three: on
 * these shared 2-core machines a server's rate moves by ±15% or more between rounds of the same
 * run (the bare Markdown server answered 1,175 and 1,745 req/s in two rounds of one run), and a
 * median of five rounds is still right when two of them were spoiled.
 */
export const THROUGHPUT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

/** The middle value (the upper one of an even count): one round spoiled by the host does not move it. */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
