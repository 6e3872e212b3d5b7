import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import { httpRequest, type Endpoint } from './http-request.js'

/** What the polite clients saw: every answer's time and status. */
export interface PoliteResult { latenciesMs: number[], statuses: Record<number, number> }

export interface FloodResult { statuses: Record<number, number>, refusedWithoutRetryAfter: number, networkErrors: number }

export function percentile (values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? NaN
}

const SUN = '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015'
const SMALL_MARKDOWN = { markdown: '# Notes\n\nSome *emphasis*, a [link](https://example.com) and `code`.\n\n- one\n- two\n' }

/**
 * Clients that each, from an address of its own, ask for sun times, a small Markdown document and
 * a page of the user list every `intervalMs`, until `until` resolves.
 */
export async function politeClients (target: Endpoint, clients: ReadonlyArray<{ address: string, accessToken: string }>, until: Promise<unknown>, intervalMs = 200): Promise<PoliteResult> {
  const agent = new http.Agent({ keepAlive: true })
  const result: PoliteResult = { latenciesMs: [], statuses: {} }
  let stopped = false
  void until.then(() => { stopped = true })
  const record = (answer: { status: number, ms: number }) => {
    result.latenciesMs.push(answer.ms)
    result.statuses[answer.status] = (result.statuses[answer.status] ?? 0) + 1
  }
  await Promise.all(clients.map(async ({ address, accessToken }, index) => {
    await sleep(index * intervalMs / clients.length) // spread over the interval
    while (!stopped) {
      const started = performance.now()
      const answers = await Promise.all([
        httpRequest(target, SUN, { from: address, agent }),
        httpRequest(target, '/api/markdown/parse', { from: address, agent, json: SMALL_MARKDOWN }),
        httpRequest(target, `/api/user/list?access_token=${encodeURIComponent(accessToken)}`, { from: address, agent })
      ])
      answers.forEach(record)
      await sleep(Math.max(0, intervalMs - (performance.now() - started)))
    }
  }))
  agent.destroy()
  return result
}

/**
 * One client, from `address`, sending documents of about `bytes` to the Markdown route on
 * `connections` connections as fast as answers come, for `durationMs`. It runs in a thread of its
 * own, so that its work does not delay the polite clients' measurements in this one.
 */
export async function flood (target: Endpoint, address: string, options: { connections: number, durationMs: number, bytes: number }): Promise<FloodResult> {
  const worker = new Worker(`
    const http = require('node:http')
    const { workerData, parentPort } = require('node:worker_threads')
    const { host, port, address, connections, durationMs, bytes } = workerData
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
    Promise.all(Array.from({ length: connections }, one)).then(() => { agent.destroy(); parentPort.postMessage(result) })
  `, { eval: true, workerData: { ...target, address, ...options } })
  try {
    return await new Promise<FloodResult>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
  } finally {
    await worker.terminate()
  }
}

/** The polite clients' answers alone for `baselineMs`, then while one client floods for `floodMs`. */
export async function fairShareScenario (
  target: Endpoint,
  clients: ReadonlyArray<{ address: string, accessToken: string }>,
  flooder: { target?: Endpoint, address: string, connections: number, bytes: number },
  timing: { baselineMs: number, floodMs: number }
): Promise<{ baseline: PoliteResult, duringFlood: PoliteResult, flood: FloodResult }> {
  const baseline = await politeClients(target, clients, sleep(timing.baselineMs))
  const flooding = flood(flooder.target ?? target, flooder.address, { connections: flooder.connections, durationMs: timing.floodMs, bytes: flooder.bytes })
  const duringFlood = await politeClients(target, clients, flooding)
  return { baseline, duringFlood, flood: await flooding }
}
