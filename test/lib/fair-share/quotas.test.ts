import t from 'tap'
import { clientKeyOf, QuotaCounter } from '../../../lib/fair-share/quotas.js'

const WINDOW_MS = 60_000

function counterAt (quota: number): { counter: QuotaCounter, setTime: (ms: number) => void } {
  let now = 0
  const counter = new QuotaCounter({ name: 'requests', quota, windowSeconds: 60, unit: 'requests' }, { maxClients: 10, staleMs: 1000, shared: false }, () => now)
  return { counter, setTime: (ms) => { now = ms } }
}

t.test('a sliding window: the previous window counts by the part of it still inside', async (t) => {
  const { counter, setTime } = counterAt(10)
  setTime(100 * WINDOW_MS)
  for (let n = 0; n < 10; n++) counter.charge('a', 1)
  t.match(counter.standing('a', 1), { remaining: 0, retryAfterSeconds: 66 }, 'full at the start of a window: room for one once 10 % of the next has passed')
  t.match(counter.standing('b', 1), { remaining: 9, retryAfterSeconds: 0 }, 'another client is untouched')
  setTime(101 * WINDOW_MS + 0.5 * WINDOW_MS)
  t.match(counter.standing('a', 1), { remaining: 4, retryAfterSeconds: 0 }, 'half-way through the next window, half the previous count remains')
  t.match(counter.standing('a', 6), { retryAfterSeconds: 6 }, 'a charge of 6 fits once 60 % has passed')
  setTime(103 * WINDOW_MS)
  t.match(counter.standing('a', 10), { remaining: 0, resetSeconds: 60, retryAfterSeconds: 0 }, 'after two windows, the whole quota; its reset at the window\'s end')
})

t.test('the reset is never above the window: the Retry-After when refused, the window\'s end otherwise (#59)', async (t) => {
  const { counter, setTime } = counterAt(5)
  setTime(7 * WINDOW_MS + 15_000)
  t.same(counter.standing('a', 1), { remaining: 4, resetSeconds: 45, retryAfterSeconds: 0 })
  t.same(counter.standing('unseen', 0), { remaining: 5, resetSeconds: 0, retryAfterSeconds: 0 }, 'nothing used: nothing to reset')
  counter.charge('a', 5)
  const refused = counter.standing('a', 1)
  t.equal(refused.resetSeconds, refused.retryAfterSeconds)
  t.ok(refused.retryAfterSeconds > 45 && refused.retryAfterSeconds <= 60, `${refused.retryAfterSeconds} s`)
  // Every moment of two windows of steady use: t stays within w.
  for (let ms = 8 * WINDOW_MS; ms < 10 * WINDOW_MS; ms += 1000) {
    setTime(ms)
    const standing = counter.standing('a', 1)
    if (standing.retryAfterSeconds === 0) counter.charge('a', 1)
    if (standing.resetSeconds > 60) t.fail(`t=${standing.resetSeconds} at ${ms - 8 * WINDOW_MS} ms`)
  }
  // Counts shared by many replicas can pass the quota: the wait may pass the window, t still does not.
  const crowded = counterAt(5)
  crowded.setTime(7 * WINDOW_MS + 59_000)
  for (let n = 0; n < 12; n++) crowded.counter.charge('a', 1)
  crowded.setTime(8 * WINDOW_MS + 1000)
  const over = crowded.counter.standing('a', 1)
  t.ok(over.retryAfterSeconds > 0 && over.resetSeconds <= 60, `Retry-After ${over.retryAfterSeconds} s, t=${over.resetSeconds}`)
})

t.test('clients: IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', async (t) => {
  t.equal(clientKeyOf('203.0.113.7'), '203.0.113.7')
  t.equal(clientKeyOf('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(clientKeyOf('2001:db8:0:1::1'), '2001:db8:0:1::/64')
  t.equal(clientKeyOf('2001:0db8:0000:0001:abcd::2'), '2001:db8:0:1::/64')
  t.equal(clientKeyOf('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(clientKeyOf('::1'), '0:0:0:0::/64')
  t.equal(clientKeyOf('fe80::1%eth0'), 'fe80:0:0:0::/64')
})
