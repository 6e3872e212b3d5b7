import { spawn } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { httpRequest, type Endpoint, type RequestOptions } from './http-request.js'

/** What the polite clients saw: every answer's time and status. */
export interface PoliteResult { latenciesMs: number[], statuses: Record<number, number> }

export interface FloodResult { statuses: Record<number, number>, refusedWithoutRetryAfter: number, networkErrors: number }

export function percentile (values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? NaN
}

const SUN = '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015'
const SMALL_MARKDOWN = { markdown: '# Notes\n\nSome *emphasis*, a [link](https://example.com) and `code`.\n\n- one\n- two\n' }

/** The phase of the scenario: the polite clients alone, or during the flood. */
export type Phase = 'alone' | 'flood'

/**
 * Clients that each, from an address of its own, ask for sun times, a small Markdown document and
 * a page of the user list every `intervalMs`, until `until` resolves. Each answer's status counts
 * for the phase it was asked in; its time only if it was answered in the same phase.
 */
async function politeClients (target: Endpoint, clients: ReadonlyArray<{ address: string, accessToken: string }>, phase: () => Phase, until: Promise<unknown>, intervalMs = 200): Promise<Record<Phase, PoliteResult>> {
  const agent = new http.Agent({ keepAlive: true })
  const results: Record<Phase, PoliteResult> = { alone: { latenciesMs: [], statuses: {} }, flood: { latenciesMs: [], statuses: {} } }
  let stopped = false
  void until.then(() => { stopped = true })
  const ask = async (path: string, options: RequestOptions) => {
    const askedIn = phase()
    const answer = await httpRequest(target, path, { agent, ...options })
    results[askedIn].statuses[answer.status] = (results[askedIn].statuses[answer.status] ?? 0) + 1
    if (phase() === askedIn) results[askedIn].latenciesMs.push(answer.ms)
  }
  await Promise.all(clients.map(async ({ address, accessToken }, index) => {
    await sleep(index * intervalMs / clients.length) // spread over the interval
    while (!stopped) {
      const started = performance.now()
      await Promise.all([
        ask(SUN, { from: address }),
        ask('/api/markdown/parse', { from: address, json: SMALL_MARKDOWN }),
        ask(`/api/user/list?access_token=${encodeURIComponent(accessToken)}`, { from: address })
      ])
      await sleep(Math.max(0, intervalMs - (performance.now() - started)))
    }
  }))
  agent.destroy()
  return results
}

/** The flooding client: a script for `node -e`, its options in argv[1], its result on standard output. */
const FLOODER = `
  const http = require('node:http')
  const { host, port, address, connections, durationMs, bytes } = JSON.parse(process.argv[1])
  const paragraph = 'Lorem *ipsum* dolor sit amet, [consectetur](https://example.com) adipiscing elit.\\n\\n'
  const body = Buffer.from(JSON.stringify({ markdown: paragraph.repeat(Math.ceil(bytes / paragraph.length)).slice(0, bytes) }))
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const result = { statuses: {}, refusedWithoutRetryAfter: 0, networkErrors: 0 }
  const end = Date.now() + durationMs
  const one = () => Date.now() >= end ? Promise.resolve() : new Promise((resolve) => {
    const request = http.request({ host, port, path: '/api/markdown/parse', method: 'POST', agent, localAddress: address,
      headers: { 'content-type': 'application/json', 'content-length': body.length } }, (response) => {
      result.statuses[response.statusCode] = (result.statuses[response.statusCode] ?? 0) + 1
      if (response.statusCode === 429 && response.headers['retry-after'] === undefined) result.refusedWithoutRetryAfter++
      response.resume()
      response.on('end', resolve)
      response.on('error', resolve)
    })
    request.on('error', () => { result.networkErrors++; resolve() })
    request.end(body)
  }).then(one)
  Promise.all(Array.from({ length: connections }, one)).then(() => { agent.destroy(); process.stdout.write(JSON.stringify(result)) })
`

/**
 * One client, from `address`, sending documents of about `bytes` to the Markdown route on
 * `connections` connections as fast as answers come, for `durationMs`. It is a process of its own
 * at a lower priority (nice 10): a flooding client's CPU is its own machine's, and on the one
 * machine of a test it would otherwise take a core from the service it floods, whatever the
 * service does, and from the polite clients' measurements.
 */
async function floodFor (target: Endpoint, address: string, options: { connections: number, durationMs: number, bytes: number }): Promise<FloodResult> {
  const child = spawn('nice', ['-n', '10', process.execPath, '-e', FLOODER, JSON.stringify({ ...target, address, ...options })], { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(child, 'close') as [number | null]
  if (code !== 0) throw new Error(`the flooding client exited with ${code}`)
  return JSON.parse(output) as FloodResult
}

/**
 * The polite clients' answers alone and while one client floods, in `rounds` rounds of `aloneMs`
 * alone then `floodMs` of flood, so that what else the machine does falls on both phases alike.
 */
export async function fairShareScenario (
  target: Endpoint,
  clients: ReadonlyArray<{ address: string, accessToken: string }>,
  flooder: { address: string, connections: number, bytes: number },
  timing: { rounds: number, aloneMs: number, floodMs: number }
): Promise<{ alone: PoliteResult, duringFlood: PoliteResult, flood: FloodResult }> {
  let current: Phase = 'alone'
  let done!: () => void
  const finished = new Promise<void>((resolve) => { done = resolve })
  const polite = politeClients(target, clients, () => current, finished)
  const flood: FloodResult = { statuses: {}, refusedWithoutRetryAfter: 0, networkErrors: 0 }
  for (let round = 0; round < timing.rounds; round++) {
    await sleep(timing.aloneMs)
    current = 'flood'
    const result = await floodFor(target, flooder.address, { connections: flooder.connections, durationMs: timing.floodMs, bytes: flooder.bytes })
    current = 'alone'
    for (const [status, count] of Object.entries(result.statuses)) flood.statuses[Number(status)] = (flood.statuses[Number(status)] ?? 0) + count
    flood.refusedWithoutRetryAfter += result.refusedWithoutRetryAfter
    flood.networkErrors += result.networkErrors
  }
  await sleep(timing.aloneMs)
  done()
  const { alone, flood: duringFlood } = await polite
  return { alone, duringFlood, flood }
}
