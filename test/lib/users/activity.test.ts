import t, { type Test } from 'tap'
import { ActivityRecorder } from '../../../lib/users/activity.js'

const INTERVAL_MS = 60_000 // the timer never fires during a test: each test flushes by hand

function recorder (t: Test, fail = () => false) {
  const writes: Array<Map<number, number>> = []
  const errors: unknown[] = []
  const activity = new ActivityRecorder(async (seen) => {
    if (fail()) throw new Error('database away')
    writes.push(new Map(seen))
  }, INTERVAL_MS, (error) => { errors.push(error) })
  t.teardown(async () => { await activity.close() })
  return { activity, writes, errors }
}

t.test('activity is written in one batch per interval, at most once per user', async (t) => {
  const { activity, writes } = recorder(t)
  activity.seen(1, 1000)
  activity.seen(2, 1500)
  activity.seen(1, 2000)
  t.same(writes, [], 'nothing is written on the request path')
  t.equal(activity.lastSeen(1), 1000, 'but it is known here at once')
  await activity.flush(2000)
  t.same(writes, [new Map([[1, 1000], [2, 1500]])], 'one write for every user seen')
  activity.seen(1, 1000 + INTERVAL_MS - 1)
  await activity.flush(1000 + INTERVAL_MS - 1)
  t.equal(writes.length, 1, 'a user written less than an interval ago is not written again')
  t.equal(activity.lastSeen(2), 1500, 'what was written is still known here until the interval ends')
  activity.seen(1, 1000 + INTERVAL_MS)
  await activity.flush(1000 + INTERVAL_MS)
  t.same(writes[1], new Map([[1, 1000 + INTERVAL_MS]]), 'an interval later it is')
})

t.test('a failed write is kept for the next interval', async (t) => {
  let away = true
  const { activity, writes, errors } = recorder(t, () => away)
  activity.seen(7, 5000)
  await activity.flush()
  t.equal(errors.length, 1, 'the failure is reported')
  t.equal(activity.lastSeen(7), 5000)
  away = false
  await activity.flush()
  t.same(writes, [new Map([[7, 5000]])], 'written once the database is back')
})

t.test('close writes what is pending', async (t) => {
  const { activity, writes } = recorder(t)
  activity.seen(3, 42)
  await activity.close()
  t.same(writes, [new Map([[3, 42]])])
})

t.test('close waits for a write under way, then writes what came after it', async (t) => {
  const writes: Array<Map<number, number>> = []
  let release = (): void => {}
  const activity = new ActivityRecorder(async (seen) => {
    writes.push(new Map(seen))
    if (writes.length === 1) await new Promise<void>((resolve) => { release = resolve })
  }, INTERVAL_MS, () => {})
  activity.seen(1, 10)
  const underWay = activity.flush()
  activity.seen(2, 20)
  const closed = activity.close()
  release()
  await Promise.all([underWay, closed])
  t.same(writes, [new Map([[1, 10]]), new Map([[2, 20]])])
})
