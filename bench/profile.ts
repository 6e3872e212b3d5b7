/**
 * `npm run profile -- sun|list [DATABASE_URL]`: where a request's time goes on the main thread of
 * `meridian serve` (quiet, as the bench starts it), from V8's CPU profile under load: microseconds a
 * request for each part, the parts named by the module that ran (self time, so a part's callees count
 * as their own). Warm-up load, a pause, then PROFILE_SECONDS (10) of the bench's sun queries, or of
 * list page 1 with the bench user's token, on 20 connections; only that stretch of the profile is
 * counted. The database is a fresh SQLite file unless a URL is given (a PostgreSQL database to use).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchRequest, JSON_HEADERS, load, log } from './harness.js'
import { BENCH_USER } from './servers.js'
import { startService } from './service.js'
import { sunQueries } from './sun-queries.js'

interface ProfileNode { id: number, callFrame: { functionName: string, url: string }, children?: number[] }
interface CpuProfile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10)
/** An idle stretch at least this long separates the warm-up from the measured load. */
const PAUSE_MS = 1500

/** The part of a request that a frame belongs to, by the code that runs in it. */
export function partOf ({ functionName, url }: ProfileNode['callFrame']): string {
  if (url === '') {
    if (functionName.startsWith('(')) return functionName
    // The write to the socket: on loopback the kernel delivers to the client inside the call.
    if (functionName === 'writev' || functionName.startsWith('write')) return 'socket write (system call)'
    if (functionName.startsWith('RegExp: ')) return 'regular expressions'
    // Code compiled at start-up from the route's schemas: Ajv's validators are named validateN,
    // fast-json-stringify's serializers anonymousN.
    if (/^validate\d*$/.test(functionName)) return 'query validation (Ajv, compiled)'
    if (/^anonymous\d*$/.test(functionName)) return 'answer serialization (fast-json-stringify, compiled)'
    return 'node: native (microtasks, timers, …)'
  }
  const modulePath = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url)
  if (modulePath !== null) {
    const [, name, file] = modulePath
    if (name === 'fastify') return `fastify: ${file!.replace(/^lib\//, '')}`
    return name!
  }
  const own = /\/dist\/(.*)\.js$/.exec(url)
  if (own !== null) return `meridian: ${own[1]}`
  if (url.startsWith('node:')) {
    if (/_http_|internal\/http/.test(url)) return 'node: http'
    if (/net|stream|socket/.test(url)) return 'node: net and streams'
    return 'node: other'
  }
  return url
}

/** Self time of each sample, in µs, within the one busy stretch after the last pause of at least PAUSE_MS. */
function measuredStretch (profile: CpuProfile): Array<{ node: number, us: number }> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const samples = profile.samples.map((node, i) => ({ node, us: profile.timeDeltas[i + 1] ?? 0 }))
  const idle = (node: number): boolean => byId.get(node)?.callFrame.functionName === '(idle)'
  // The start of the measured load: after the last run of idle samples that lasts PAUSE_MS, before the final idle run.
  let end = samples.length
  while (end > 0 && idle(samples[end - 1]!.node)) end--
  let start = end
  let idleRunUs = 0
  while (start > 0) {
    const sample = samples[start - 1]!
    idleRunUs = idle(sample.node) ? idleRunUs + sample.us : 0
    if (idleRunUs >= PAUSE_MS * 1000) break
    start--
  }
  return samples.slice(start, end)
}

const [route = 'sun', databaseUrl] = process.argv.slice(2)
if (route !== 'sun' && route !== 'list') throw new Error('profile: sun or list')

const dir = mkdtempSync(join(tmpdir(), 'meridian-profile-'))
try {
  const service = await startService('quiet', databaseUrl ?? `sqlite:${join(dir, 'meridian.db')}`, 0, 'exempt', ['--cpu-prof', `--cpu-prof-dir=${dir}`])
  let total = 0
  try {
    let requests: BenchRequest[] = sunQueries()
    if (route === 'list') {
      const login = await fetch(`${service.url}/api/auth/login`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(BENCH_USER) })
      const { access_token: token } = await login.json() as { access_token: string }
      requests = [{ method: 'GET', path: `/api/user/list?access_token=${token}` }]
    }
    log(`${route}: warming up (3 s), pause, then profiling (${SECONDS} s)`)
    await load({ url: service.url, requests, connections: 20, duration: 3 })
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * 2))
    total = (await load({ url: service.url, requests, connections: 20, duration: SECONDS })).requests.total
  } finally {
    await service.stop()
  }
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error('no CPU profile written')
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parts = new Map<string, number>()
  for (const { node, us } of measuredStretch(profile)) {
    const part = partOf(byId.get(node)!.callFrame)
    parts.set(part, (parts.get(part) ?? 0) + us)
  }
  if (process.env.PROFILE_FUNCTIONS !== undefined) {
    const functions = new Map<string, number>()
    for (const { node, us } of measuredStretch(profile)) {
      const { functionName, url } = byId.get(node)!.callFrame
      if (partOf({ functionName, url }) !== process.env.PROFILE_FUNCTIONS) continue
      const key = `${functionName || '(anonymous)'} ${url}`
      functions.set(key, (functions.get(key) ?? 0) + us)
    }
    for (const [key, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 25)) log(`  ${(us / total).toFixed(2)} µs ${key}`)
  }
  const busy = [...parts].filter(([part]) => part !== '(idle)').reduce((sum, [, us]) => sum + us, 0)
  console.log(`${total} requests in ${SECONDS} s; main thread busy ${(busy / 1000).toFixed(0)} ms: ${(busy / total).toFixed(1)} µs a request\n`)
  console.log('| part | µs a request |')
  console.log('|---|---|')
  for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
    if (part === '(idle)' || us / total < 0.1) continue
    console.log(`| ${part} | ${(us / total).toFixed(1)} |`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
