import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { build, stallEventLoop } from '../helper.js'

const SHORT_IDLE_MS = 200

async function waitFor (condition: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  while (!condition() && performance.now() < end) await sleep(20)
  return condition()
}

function collectionLog (): { logStream: Writable, collections: () => Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const logStream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    }
  })
  return { logStream, collections: () => lines.filter((line) => line.msg === 'idle: memory collected') }
}

/** The collections this process was made to run (V8 marks them forced), in order. */
function forcedCollections (): { kinds: () => Array<'minor' | 'major'>, gaps: () => number[], stop: () => void } {
  const entries: Array<{ kind: 'minor' | 'major', startTime: number }> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind, flags } = (entry as PerformanceEntry & { detail: { kind: number, flags: number } }).detail
      if ((flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) continue
      entries.push({ kind: kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : 'major', startTime: entry.startTime })
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return {
    kinds: () => entries.map((entry) => entry.kind),
    gaps: () => entries.slice(1).map((entry, index) => entry.startTime - (entries[index]?.startTime ?? 0)),
    stop: () => { observer.disconnect() }
  }
}

// Whether V8 gives memory back is shown in test/server.test.ts, on the server as `npm start` runs it:
// under tap's coverage, V8 keeps its young generation whatever is collected.
t.test('once the replica is idle: a scavenge, a full collection one idle interval later, then none while it stays idle, never while it works', async (t) => {
  const { logStream, collections } = collectionLog()
  const forced = forcedCollections()
  t.teardown(forced.stop)
  const app = await build(t, { LOG_LEVEL: 'debug' }, { logStream, idleCollection: { idleMs: SHORT_IDLE_MS } })
  t.ok(await waitFor(() => collections().length === 1, 20 * SHORT_IDLE_MS), 'collected once idle')
  t.match(collections()[0], { ms: Number, residentMb: Number })
  // Observer entries arrive after the collection, on a later turn of the event loop.
  await waitFor(() => forced.kinds().length === 2, 5 * SHORT_IDLE_MS)
  t.same(forced.kinds(), ['minor', 'major'], 'a scavenge first, then the full collection')
  // The full collection comes an idle interval after the scavenge, not right behind it (the bound
  // leaves room for late timers): with the default 10 s, V8 then measures over idle time only.
  const [gap = 0] = forced.gaps()
  t.ok(gap >= SHORT_IDLE_MS / 2, `the full collection came ${gap.toFixed(0)} ms after the scavenge`)

  await sleep(5 * SHORT_IDLE_MS)
  t.equal(collections().length, 1, 'not again while it stays idle')
  t.equal(forced.kinds().length, 2, 'no scavenge either')

  await stallEventLoop(4 * SHORT_IDLE_MS)
  t.equal(collections().length, 1, 'never while it works')
  t.equal(forced.kinds().length, 2, 'no scavenge while it works either')
  t.ok(await waitFor(() => collections().length === 2, 20 * SHORT_IDLE_MS), 'again once idle after the work')
  await waitFor(() => forced.kinds().length === 4, 5 * SHORT_IDLE_MS)
  t.same(forced.kinds(), ['minor', 'major', 'minor', 'major'], 'again a scavenge first')
  await app.close()
  await sleep(3 * SHORT_IDLE_MS)
  t.equal(collections().length, 2, 'none after the app closed')
  t.equal(forced.kinds().length, 4, 'no scavenge after the app closed either')
})
