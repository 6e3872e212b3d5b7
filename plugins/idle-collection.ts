import { performance } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface IdleCollectionOptions {
  /**
   * How long the event loop must have been idle before the scavenge, and again before the full
   * collection; 10 s by default (0: never). V8 measures the allocation rate over at least the
   * last 5 s, so below that the full collection's measure reaches back into the work.
   */
  idleMs?: number
}

/** More event-loop time than this in an interval is work; probes and metrics scrapes take far less. */
const WORK_MS = 100

type GarbageCollector = (options?: { type: 'minor' }) => void
let collector: GarbageCollector | undefined

/**
 * V8's garbage collector, which Node does not expose without `--expose-gc`: the flag can be set
 * at run time, but only contexts created afterwards get the function. Fetched at the first
 * collection, once per process: a process that never falls idle (a CLI command, most tests)
 * never sets the flag.
 */
function garbageCollector (): GarbageCollector {
  collector ??= (globalThis as { gc?: GarbageCollector }).gc
  if (collector === undefined) {
    setFlagsFromString('--expose-gc')
    collector = runInNewContext('gc') as GarbageCollector
  }
  return collector
}

const MB = 1048576

/** Memory V8 holds for its young generation (both semi-spaces), in MB. */
function youngGenerationMb (): number {
  const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
  return Math.round((newSpace?.space_size ?? 0) / MB)
}

/** Where the replica stands since it last worked. */
type IdlePhase = 'working' | 'scavenged' | 'collected'

/**
 * Gives memory back once the replica falls idle. Starting up (loading modules, compiling every
 * schema) or a burst of requests makes V8 grow its young generation up to its 32 MB maximum, and V8
 * shrinks it only in a collection that finds the allocation rate low, measured since its previous
 * collection and over at least the last 5 s. An idle replica runs no collection, so it kept
 * ~120 MB instead of ~90 MB (measured with `npm run bench:auth -- memory`). A single full
 * collection once idle was not enough: counting what the work allocated since the collection
 * before, V8 kept the 32 MB in 4 of 17 starts on a loaded machine. So after a whole idle interval
 * following some work, a scavenge (a few ms), which usually shrinks it already; after one more
 * idle interval, a full collection (20–30 ms), which finds almost nothing allocated since the
 * scavenge, so V8 shrinks now if it had not. Then none until the replica has worked again. (A
 * replica that works in every other interval only ever scavenges.)
 */
export default fp(async function idleCollection (fastify: FastifyInstance, options: IdleCollectionOptions) {
  const idleMs = options.idleMs ?? 10_000
  if (idleMs <= 0) return
  // From the end of start-up: the start itself is the work that leaves the most behind.
  let phase: IdlePhase = 'working'
  let previous = performance.eventLoopUtilization()
  let timer: NodeJS.Timeout | undefined

  const collect = (type: 'minor' | 'major'): void => {
    const residentMb = Math.round(process.memoryUsage.rss() / MB)
    const youngMbBefore = youngGenerationMb()
    const collectGarbage = garbageCollector()
    const started = performance.now()
    if (type === 'minor') collectGarbage({ type })
    else collectGarbage()
    const ms = Math.round(performance.now() - started)
    // V8 returns the young generation's pages after the collection, within about a second.
    fastify.log.debug({ ms, residentMb, youngMbBefore, youngMbAfter: youngGenerationMb() },
      type === 'minor' ? 'idle: young generation scavenged' : 'idle: memory collected')
  }

  const checkIdle = (): void => {
    const now = performance.eventLoopUtilization()
    const { active } = performance.eventLoopUtilization(now, previous)
    previous = now
    if (active > WORK_MS) {
      phase = 'working'
    } else if (phase === 'working') {
      collect('minor')
      phase = 'scavenged'
    } else if (phase === 'scavenged') {
      collect('major')
      phase = 'collected'
    } else {
      return
    }
    // A collection is not work: the next interval starts after it.
    previous = performance.eventLoopUtilization()
  }
  fastify.addHook('onReady', async () => {
    previous = performance.eventLoopUtilization()
    timer = setInterval(checkIdle, idleMs).unref()
  })
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}, { name: 'idle-collection' })
