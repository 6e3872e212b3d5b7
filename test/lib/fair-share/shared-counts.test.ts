import t from 'tap'
import type { Redis } from 'ioredis'
import { QuotaCounter } from '../../../lib/fair-share/quotas.js'
import { SharedCounts } from '../../../lib/fair-share/shared-counts.js'

const WINDOW_MS = 60_000

/** Just what SharedCounts asks of ioredis: a pipeline of INCRBY, PEXPIRE and GET over one map, or failing. */
function fakeRedis (values: Map<string, number>, state: { failing: boolean }): Redis {
  return {
    pipeline () {
      const commands: Array<() => unknown> = []
      const chain = {
        incrby (key: string, by: number) { commands.push(() => { values.set(key, (values.get(key) ?? 0) + by); return values.get(key) }); return chain },
        pexpire () { commands.push(() => 1); return chain },
        get (key: string) { commands.push(() => values.has(key) ? String(values.get(key)) : null); return chain },
        async exec () {
          if (state.failing) throw new Error('connect ECONNREFUSED')
          return commands.map((command) => [null, command()])
        }
      }
      return chain
    }
  } as unknown as Redis
}

function replica (redis: Redis, clock: { now: number }, failures: unknown[] = []) {
  const counter = new QuotaCounter({ name: 'requests', quota: 10, windowSeconds: 60, unit: 'requests' }, { maxClients: 10, staleMs: 1000, shared: true }, () => clock.now)
  const shared = new SharedCounts(redis, [counter], { intervalMs: 60_000, prefix: 'test:', onFailure: (error) => failures.push(error), onAnswer: () => {} }, () => clock.now)
  t.teardown(async () => { await shared.close() })
  return { counter, shared }
}

t.test('one share across replicas, and across a pause longer than the staleness bound', async (t) => {
  const values = new Map<string, number>()
  const state = { failing: false }
  const clock = { now: 10 * WINDOW_MS + 1000 }
  const [a, b] = [replica(fakeRedis(values, state), clock), replica(fakeRedis(values, state), clock)]
  for (let n = 0; n < 6; n++) a.counter.charge('c', 1)
  await a.shared.sync()
  t.equal(values.get('test:requests:c:10'), 6, 'the charges reached the store under the window\'s key')
  b.counter.standing('c', 1)
  await b.shared.sync()
  t.equal(b.counter.standing('c', 1).remaining, 3, 'the other replica counts them: 4 left, 3 once this one is charged')
  clock.now += 5000
  await a.shared.sync() // nothing to send: the store still answers others' syncs
  await b.shared.sync()
  for (let n = 0; n < 4; n++) b.counter.charge('c', 1)
  t.equal(b.counter.standing('c', 1).retryAfterSeconds > 0, true, 'after a pause, the totals still count: the share is used up')
})

t.test('the window turns: the totals move on, and a late answer is the previous window\'s', async (t) => {
  const values = new Map<string, number>()
  const clock = { now: 20 * WINDOW_MS + 59_000 }
  const a = replica(fakeRedis(values, { failing: false }), clock)
  for (let n = 0; n < 8; n++) a.counter.charge('c', 1)
  await a.shared.sync()
  values.set('test:requests:c:20', 9) // another replica's one
  clock.now = 21 * WINDOW_MS + 30_000
  a.counter.charge('c', 1)
  await a.shared.sync()
  t.equal(values.get('test:requests:c:21'), 1, 'the new window\'s charge under its own key')
  // Half-way through window 21: the previous window's 9 weigh 4.5, this window's 1 counts whole.
  t.equal(a.counter.standing('c', 1).remaining, 3, 'the previous total read from the store (9), not this replica\'s own (8)')
})

t.test('a store that fails: this replica\'s own counts once the bound has passed, and nobody refused for it', async (t) => {
  const values = new Map<string, number>()
  const state = { failing: false }
  const failures: unknown[] = []
  const clock = { now: 30 * WINDOW_MS + 1000 }
  const a = replica(fakeRedis(values, state), clock, failures)
  a.counter.charge('c', 1)
  await a.shared.sync()
  values.set('test:requests:c:30', 9) // other replicas used 8 more
  a.counter.charge('c', 1)
  await a.shared.sync()
  t.ok(a.counter.standing('c', 1).retryAfterSeconds > 0, 'while the store answers, the share is used up (10 of 10)')
  state.failing = true
  a.counter.charge('c', 1)
  await a.shared.sync()
  t.equal(failures.length, 1, 'the failure is reported')
  t.ok(a.counter.standing('c', 1).retryAfterSeconds > 0, 'within the bound, the last totals still count')
  clock.now += 1001
  t.equal(a.counter.standing('c', 1).retryAfterSeconds, 0, 'past the bound, this replica\'s own count (3) decides')
  t.equal(a.counter.standing('c', 1).remaining, 6)
})
