import t from 'tap'
import { retryWhileBusy } from '../../../lib/store/retry-while-busy.js'

const busy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })

t.test('an operation that met a lock runs again from its start, with the event loop turning between attempts', async (t) => {
  let attempts = 0
  let turnsBetweenAttempts = 0
  const result = await retryWhileBusy(async () => {
    attempts++
    if (attempts < 4) {
      setImmediate(() => { turnsBetweenAttempts++ })
      throw busy()
    }
    return 'done'
  // A wait far past the three pauses: a sibling test holding this process's event loop must not end it first.
  }, 60_000)
  t.equal(result, 'done')
  t.equal(attempts, 4)
  t.equal(turnsBetweenAttempts, 3, 'each pause let the event loop turn')
})

t.test('a lock that outlasts the wait fails with its busy error, about when the wait ends', async (t) => {
  const waitMs = 100
  const started = performance.now()
  let attempts = 0
  await t.rejects(retryWhileBusy(async () => { attempts++; throw Object.assign(busy(), { code: 'SQLITE_BUSY_SNAPSHOT' }) }, waitMs), { code: 'SQLITE_BUSY_SNAPSHOT' })
  const elapsed = performance.now() - started
  // Not before the wait ends; soon after it (a second of slack: timers run late on a busy machine).
  t.ok(elapsed >= waitMs && elapsed < waitMs + 1000, `gave up after ${elapsed.toFixed(0)} ms`)
  t.ok(attempts > 2, `after ${attempts} attempts`)
})

t.test('any other failure is not retried', async (t) => {
  let attempts = 0
  await t.rejects(retryWhileBusy(async () => { attempts++; throw Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }) }), { code: 'SQLITE_CONSTRAINT_UNIQUE' })
  t.equal(attempts, 1)
})
