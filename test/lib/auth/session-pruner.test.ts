import t from 'tap'
import { PRUNE_BATCH, SessionPruner } from '../../../lib/auth/session-pruner.js'
import type { PrunedCause, SessionStore } from '../../../lib/store/session-store.js'

/** A store holding `backlog` pruneable sessions, every third one expired and the rest logged out; it counts its statements. */
function storeWith (backlog: number) {
  let left = backlog
  let statements = 0
  const store = {
    async pruneSome (_now: number, limit: number): Promise<PrunedCause[]> {
      statements++
      const batch = Math.min(limit, left)
      left -= batch
      return Array.from({ length: batch }, (_, n) => (left + n) % 3 === 0 ? 'expiry' : 'logout')
    }
  } as unknown as SessionStore
  return { store, left: () => left, statements: () => statements }
}

t.test('a backlog is pruned in batches, counted by cause, with the event loop turning between batches', async (t) => {
  const backlog = 2 * PRUNE_BATCH + 7
  const { store, left, statements } = storeWith(backlog)
  const pruner = new SessionPruner(store, 60_000, (error) => { throw error })
  t.teardown(async () => { await pruner.close() })
  // Counts the timers that fire while the pruning runs: none could between batches run back to back.
  let ticks = 0
  let pruning = true
  const tick = (): void => { if (pruning) { ticks++; setTimeout(tick, 0) } }
  setTimeout(tick, 0)
  const runs = [pruner.prune(), pruner.prune()]
  t.same(await Promise.all(runs), [backlog, backlog], 'a call during a run joins it')
  pruning = false
  t.same([left(), statements()], [0, 3], 'three statements in all: two full batches and the rest')
  t.same({ ...pruner.pruned }, { logout: backlog - Math.ceil(backlog / 3), expiry: Math.ceil(backlog / 3), password: 0, removal: 0, operator: 0 })
  t.ok(ticks >= 2, `timers ran between the batches (${ticks})`)
  t.equal(await pruner.prune(), 0, 'a later run finds nothing')
})

t.test('closing stops a run after its current batch', async (t) => {
  const { store, left } = storeWith(10 * PRUNE_BATCH)
  const pruner = new SessionPruner(store, 60_000, (error) => { throw error })
  const run = pruner.prune()
  await pruner.close()
  t.equal(await run, PRUNE_BATCH, 'one batch, then it stopped')
  t.equal(left(), 9 * PRUNE_BATCH)
})
