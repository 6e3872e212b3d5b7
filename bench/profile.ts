/**
 * `npm run profile -- ROUTE [DATABASE_URL]`: where a request's time goes on the main thread of a server,
 * from V8's CPU profile under load: microseconds a request for each part, the parts named by the module
 * that ran (self time, so a part's callees count as their own). Warm-up load, a pause, then
 * PROFILE_SECONDS (10) of load on PROFILE_CONNECTIONS (20); only that stretch of the profile is counted.
 *
 *   sun      `meridian serve` quiet, as the bench starts it, the bench's sun queries
 *   list     the same, list page 1 with the bench user's token
 *   refresh  the same, refresh with the bench user's refresh token
 *   markdown the same, the plain README (no fence, dollar or `<`: PLAIN_README)
 *   fixed    the bench's reference for sun: Fastify answering a fixed body, the same queries
 *   app      the app built in a process of the bench's own (bench/servers.ts), not by `meridian serve`, sun
 *
 * The database is a fresh SQLite file unless a URL is given (a PostgreSQL database to use).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchRequest, type ChildServer, JSON_HEADERS, load, log, pinServersAwayFromLoad, startServerWithNodeArgs } from './harness.js'
import { listRequest, logIn, refreshRequest } from './fixtures.js'
import { startService } from './service.js'
import { sunQueries } from './sun-queries.js'
import { PLAIN_README } from '../test/support/markdown-corpus.js'

interface ProfileNode { id: number, callFrame: { functionName: string, url: string }, children?: number[] }
interface CpuProfile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 20)
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
  // A pause may hold a little work (the counters feed's heartbeat, timers): it ends only at 20 ms of work.
  let start = end
  let pauseUs = 0
  let workInPauseUs = 0
  while (start > 0) {
    const sample = samples[start - 1]!
    if (idle(sample.node)) pauseUs += sample.us
    else workInPauseUs += sample.us
    if (workInPauseUs > 20_000) pauseUs = workInPauseUs = 0
    if (pauseUs >= PAUSE_MS * 1000) break
    start--
  }
  // The pause's own few samples of work are not the load's.
  while (start < end && !idle(samples[start]!.node)) start++
  while (start < end && idle(samples[start]!.node)) start++
  return samples.slice(start, end)
}

const [route = 'sun', databaseUrl] = process.argv.slice(2)
if (!['sun', 'list', 'refresh', 'markdown', 'fixed', 'app'].includes(route)) throw new Error('profile: sun, list, refresh, markdown, fixed or app')

const dir = mkdtempSync(join(tmpdir(), 'meridian-profile-'))
try {
  const database = databaseUrl ?? `sqlite:${join(dir, 'meridian.db')}`
  // Samples every 100 µs, not every 1 ms: a part of 0.1 µs a request is then hundreds of samples.
  const profiler = ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100']
  const service: ChildServer = route === 'fixed'
    ? await startServerWithNodeArgs(profiler, 'fixed')
    : route === 'app' ? await startServerWithNodeArgs(profiler, 'app', database, '0') : await startService('quiet', database, 0, 'exempt', { nodeArgs: profiler, cli: process.env.PROFILE_CLI })
  // The server on the first core, the load on the second: on a machine this small the client would
  // otherwise take the server's core whenever an answer wakes it, and the profile would count the
  // server's wait inside its write as the write's cost.
  pinServersAwayFromLoad([service])
  let total = 0
  try {
    let requests: BenchRequest[] = sunQueries()
    if (route === 'markdown') requests = [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: PLAIN_README }) }]
    if (route === 'list' || route === 'refresh') {
      const tokens = await logIn(service.url)
      requests = [route === 'list' ? listRequest(tokens) : refreshRequest(tokens)]
    }
    log(`${route}: warming up (3 s), pause, then profiling (${SECONDS} s)`)
    await load({ url: service.url, requests, connections: CONNECTIONS, duration: 3 })
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * 2))
    total = (await load({ url: service.url, requests, connections: CONNECTIONS, duration: SECONDS })).requests.total
  } finally {
    if (route === 'fixed' || route === 'app') {
      // bench/servers.ts exits by itself when the harness disconnects: a normal exit, so the profile is written.
      const exited = new Promise((resolve) => service.child.once('exit', resolve))
      service.child.disconnect()
      await exited
    } else {
      await service.stop()
    }
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
  if (process.env.PROFILE_CALLERS !== undefined) {
    const parentOf = new Map<number, number>()
    for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
    const callers = new Map<string, number>()
    for (const { node, us } of measuredStretch(profile)) {
      if (byId.get(node)!.callFrame.functionName !== process.env.PROFILE_CALLERS) continue
      const chain: string[] = []
      for (let id = parentOf.get(node); id !== undefined && chain.length < 4; id = parentOf.get(id)) {
        const { functionName, url } = byId.get(id)!.callFrame
        chain.push(`${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, '')}`)
      }
      const key = chain.join(' < ')
      callers.set(key, (callers.get(key) ?? 0) + us)
    }
    for (const [key, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 15)) log(`  ${(us / total).toFixed(2)} µs ${key}`)
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
