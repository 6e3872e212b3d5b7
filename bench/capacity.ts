/**
 * What one replica needs, as the image runs it (`meridian serve`, production, info logging, a
 * metrics port) on SQLite: for each load, requests served a second (and refused), CPU seconds per
 * 1,000 answers (every thread of the process, so render threads count), resident memory at its peak
 * and after, and the log bytes per answer on standard output. Read from /proc; Linux only.
 */
import { readFileSync } from 'node:fs'
import { type BenchRequest, JSON_HEADERS, load, log, processCpuSeconds, type Table } from './harness.js'
import { startService } from './service.js'

function residentMiB (pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kib) / 1024
}

export interface CapacityLoad { name: string, requests: BenchRequest[], connections: number }

export async function capacity (table: Table, databaseUrl: string, loads: (serviceUrl: string) => Promise<CapacityLoad[]>, seconds = 10): Promise<void> {
  const service = await startService('image', databaseUrl)
  const pid = service.child.pid as number
  let logBytes = 0
  service.child.stdout?.on('data', (chunk: Buffer) => { logBytes += chunk.length })
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    table.note('capacity: resident memory idle, after start', `${residentMiB(pid).toFixed(0)} MiB`)
    for (const { name, requests, connections } of await loads(service.url)) {
      log(`capacity: ${name}, ${seconds} s on ${connections} connections`)
      const [cpuBefore, logBefore] = [processCpuSeconds(pid), logBytes]
      let peak = 0
      const sampler = setInterval(() => { peak = Math.max(peak, residentMiB(pid)) }, 100)
      const result = await load({ url: service.url, requests, connections, duration: seconds })
      clearInterval(sampler)
      const cpu = processCpuSeconds(pid) - cpuBefore
      log(`  statuses: ${JSON.stringify(result.statusCodeStats)}`)
      const answered = result.requests.total
      const served = answered - result.non2xx
      table.note(`capacity: ${name}, ${connections} connections`, `${Math.round(served / seconds)} served/s (${result.non2xx} refused), ` +
        `${(1000 * cpu / answered).toFixed(2)} CPU s per 1,000 answers, peak ${peak.toFixed(0)} MiB, ${Math.round((logBytes - logBefore) / answered)} log B/answer`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10_000))
    table.note('capacity: resident memory 10 s after the last load', `${residentMiB(pid).toFixed(0)} MiB`)
  } finally {
    await service.stop()
  }
}

export const markdownRequest = (markdown: string): BenchRequest =>
  ({ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown }) })
