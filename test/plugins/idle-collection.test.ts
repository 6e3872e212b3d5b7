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

// Whether V8 gives memory back is shown in test/server.test.ts, on the server as `npm start` runs it:
// under tap's coverage, V8 keeps its young generation whatever is collected.
t.test('a collection runs once the replica is idle, not again while it stays idle, never while it works', async (t) => {
  const { logStream, collections } = collectionLog()
  const app = await build(t, { LOG_LEVEL: 'debug' }, { logStream, idleCollection: { idleMs: SHORT_IDLE_MS } })
  t.ok(await waitFor(() => collections().length === 1, 20 * SHORT_IDLE_MS), 'collected once idle')
  t.match(collections()[0], { ms: Number, residentMb: Number })

  await sleep(5 * SHORT_IDLE_MS)
  t.equal(collections().length, 1, 'not again while it stays idle')

  await stallEventLoop(4 * SHORT_IDLE_MS)
  t.equal(collections().length, 1, 'never while it works')
  t.ok(await waitFor(() => collections().length === 2, 20 * SHORT_IDLE_MS), 'again once idle after the work')
  await app.close()
  await sleep(3 * SHORT_IDLE_MS)
  t.equal(collections().length, 2, 'none after the app closed')
})
