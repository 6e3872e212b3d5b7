import { performance } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface IdleCollectionOptions {
  /**
   * How long the event loop must have been idle before a collection; 10 s by default (0: never).
   * V8 gives the young generation back only if it allocated little over the last 5 s.
   */
  idleMs?: number
}

/** More event-loop time than this in an interval is work; probes and metrics scrapes take far less. */
const WORK_MS = 100

let collector: (() => void) | undefined

/**
 * V8's garbage collector, which Node does not expose without `--expose-gc`: the flag can be set
 * at run time, but only contexts created afterwards get the function. Fetched at the first
 * collection, once per process: a process that never falls idle (a CLI command, most tests)
 * never sets the flag.
 */
function garbageCollector (): () => void {
  collector ??= (globalThis as { gc?: () => void }).gc
  if (collector === undefined) {
    setFlagsFromString('--expose-gc')
    collector = runInNewContext('gc') as () => void
  }
  return collector
}

/**
 * Gives memory back once the replica falls idle. Starting up (loading modules, compiling every
 * schema) makes V8 grow its young generation to its 32 MB maximum, and V8 only shrinks it in a
 * collection that runs while little is being allocated: an idle replica runs none, so it kept
 * ~120 MB instead of ~90 MB (measured with `npm run bench:auth -- memory`). So after a whole idle
 * interval following some work, one full collection runs (20–30 ms on this heap), and not
 * again until the replica has worked again.
 */
export default fp(async function idleCollection (fastify: FastifyInstance, options: IdleCollectionOptions) {
  const idleMs = options.idleMs ?? 10_000
  if (idleMs <= 0) return
  let workedSinceCollection = true
  let previous = performance.eventLoopUtilization()
  let timer: NodeJS.Timeout | undefined

  const checkIdle = (): void => {
    const now = performance.eventLoopUtilization()
    const { active } = performance.eventLoopUtilization(now, previous)
    previous = now
    if (active > WORK_MS) {
      workedSinceCollection = true
    } else if (workedSinceCollection) {
      workedSinceCollection = false
      const residentMb = Math.round(process.memoryUsage.rss() / 1048576)
      const started = performance.now()
      garbageCollector()()
      // V8 returns the young generation's pages after the collection, within about a second.
      fastify.log.debug({ ms: Math.round(performance.now() - started), residentMb }, 'idle: memory collected')
      // The collection is not work: the next interval starts after it.
      previous = performance.eventLoopUtilization()
    }
  }
  // From the end of start-up: the start itself is the work that leaves the most behind.
  fastify.addHook('onReady', async () => {
    previous = performance.eventLoopUtilization()
    timer = setInterval(checkIdle, idleMs).unref()
  })
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}, { name: 'idle-collection' })
