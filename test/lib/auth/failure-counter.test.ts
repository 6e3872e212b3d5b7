import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { eventually } from '../../support/eventually.js'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { type FailureCounter, MemoryFailureCounter, newAttemptId, RedisFailureCounter } from '../../../lib/auth/failure-counter.js'
import { REDIS_CLIENT_OPTIONS } from '../../../lib/store/redis-connection.js'
import { redisSkip, redisUrl } from '../../support/requirements.js'
import { TcpProxy } from '../../support/tcp-proxy.js'

const WINDOW_MS = 60_000
/** The command timeout where the proxy holds Redis's answers: short, so that a test waits little for it. */
const STALLED_TIMEOUT_MS = 500

/** What both counters promise, on a counter whose keys start empty. */
async function keepsTheContract (t: Test, counter: FailureCounter): Promise<void> {
  const [first, second, third] = [newAttemptId(), newAttemptId(), newAttemptId()]
  t.equal((await counter.hit('k', first, 5)).attempts, 1)
  t.equal((await counter.hit('k', second, 5)).attempts, 2)
  counter.giveBack('k', first)
  counter.giveBack('k', first)
  counter.giveBack('k', newAttemptId())
  t.equal((await counter.hit('k', third, 5)).attempts, 2, 'a give-back removes its own attempt once; one never counted changes nothing')

  for (let i = 0; i < 3; i++) await counter.hit('full', newAttemptId(), 2)
  t.equal((await counter.hit('full', newAttemptId(), 2)).attempts, 3, 'past the limit an attempt is answered as one past it')
  const counted = newAttemptId()
  await counter.reset('full')
  await counter.hit('full', counted, 2)
  await counter.hit('full', newAttemptId(), 2)
  const refused = newAttemptId()
  t.equal((await counter.hit('full', refused, 2)).attempts, 3)
  counter.giveBack('full', counted)
  t.equal((await counter.hit('full', newAttemptId(), 2)).attempts, 2, 'and not kept: giving back a counted attempt makes room for one')

  await counter.reset('k')
  t.equal((await counter.hit('k', newAttemptId(), 5)).attempts, 1, 'a reset forgets the window')
  const alone = newAttemptId()
  await counter.hit('alone', alone, 5)
  counter.giveBack('alone', alone)
  counter.giveBack('unknown', newAttemptId())
  t.equal((await counter.hit('unknown', newAttemptId(), 5)).attempts, 1, 'giving back to an unknown key does nothing')

  const [wrong, checking, givenBack] = [newAttemptId(), newAttemptId(), newAttemptId()]
  for (const attempt of [wrong, checking, givenBack]) await counter.hit('failures', attempt, 5)
  counter.failed('failures', wrong)
  counter.giveBack('failures', givenBack)
  counter.failed('failures', givenBack)
  counter.failed('failures', newAttemptId())
  t.match(await counter.hit('failures', newAttemptId(), 5), { attempts: 3, failures: 1 },
    'a failed attempt counts as a failure, one in flight only as an attempt; marking one given back or never counted changes nothing')
  await counter.reset('full')
  const kept = [newAttemptId(), newAttemptId()]
  for (const attempt of kept) await counter.hit('full', attempt, 2)
  for (const attempt of kept) counter.failed('full', attempt)
  t.match(await counter.hit('full', newAttemptId(), 2), { attempts: 3, failures: 2 }, 'failures fill the limit')
}

t.test('memory counter: the contract', async (t) => {
  const counter = new MemoryFailureCounter(WINDOW_MS)
  t.teardown(async () => { await counter.close() })
  await keepsTheContract(t, counter)
})

t.test('memory counter: a window starts at the first attempt and ends', async (t) => {
  let now = 1_000_000
  const counter = new MemoryFailureCounter(60_000, () => now)
  t.teardown(async () => { await counter.close() })
  t.same(await counter.hit('k', newAttemptId(), 5), { attempts: 1, failures: 0, retryAfterSeconds: 60 })
  now += 10_000
  t.same(await counter.hit('k', newAttemptId(), 5), { attempts: 2, failures: 0, retryAfterSeconds: 50 })
  now += 50_000
  const late = newAttemptId()
  t.same(await counter.hit('k', late, 5), { attempts: 1, failures: 0, retryAfterSeconds: 60 }, 'the window ended: a new one starts')
  now += 60_000
  counter.giveBack('k', late)
  t.same(await counter.hit('k', newAttemptId(), 5), { attempts: 1, failures: 0, retryAfterSeconds: 60 }, 'a give-back after its window ended does not bring it back')
})

const skip = redisSkip()

interface RedisCounterSetup { counter: RedisFailureCounter, proxy: TcpProxy, direct: Redis, keyOf: (key: string) => string, cut: () => Promise<void> }

/**
 * A counter on a client through a proxy the test controls, and a direct client to look. The command
 * timeout is the service's unless a test stalls the proxy: a short one there would also fail the
 * commands of a test whose process CI starves of CPU for longer (its timer runs before the answer is read).
 */
async function redisCounter (t: Test, options: { maxUnconfirmedChanges?: number, commandTimeout?: number } = {}): Promise<RedisCounterSetup> {
  const target = new URL(redisUrl as string)
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port === '' ? 6379 : target.port) })
  const { commandTimeout = REDIS_CLIENT_OPTIONS.commandTimeout, ...counterOptions } = options
  const client = new Redis(`redis://127.0.0.1:${proxy.port}`, { ...REDIS_CLIENT_OPTIONS, commandTimeout })
  client.on('error', () => {})
  const prefix = `meridian:test:failure-counter:${randomBytes(4).toString('hex')}:`
  const counter = new RedisFailureCounter(client, WINDOW_MS, { prefix, ...counterOptions })
  const direct = new Redis(redisUrl as string)
  t.teardown(async () => {
    const keys = await direct.keys(`${prefix}*`)
    if (keys.length > 0) await direct.del(...keys)
    direct.disconnect()
    await counter.close()
    client.disconnect()
    await proxy.close()
  })
  await once(client, 'ready')
  // Until the client has seen its connection close, it would still write to it, and send it all again on reconnecting.
  const cut = async () => { proxy.cut(); await new Promise((resolve) => client.once('close', resolve)) }
  return { counter, proxy, direct, keyOf: (key) => prefix + key, cut }
}

t.test('Redis counter: the contract', { skip }, async (t) => {
  const { counter } = await redisCounter(t)
  await keepsTheContract(t, counter)
})

t.test('Redis counter: attempts the release before counted (value 1) are failures, as it treated them', { skip }, async (t) => {
  const { counter, direct, keyOf } = await redisCounter(t)
  await direct.hset(keyOf('k'), 'an-attempt-of-the-release-before', '1')
  t.match(await counter.hit('k', newAttemptId(), 5), { attempts: 2, failures: 1 })
})

t.test('Redis counter: a count that runs after its command timed out is given back', { skip }, async (t) => {
  const { counter, proxy, direct, keyOf } = await redisCounter(t, { commandTimeout: STALLED_TIMEOUT_MS })
  proxy.stall()
  const attempt = newAttemptId()
  await t.rejects(counter.hit('k', attempt, 5), { message: 'Command timed out' })
  t.equal(await direct.hlen(keyOf('k')), 1, 'the count ran; only its answer is held')
  counter.giveBack('k', attempt)
  t.ok(await eventually(async () => await direct.hlen(keyOf('k')) === 0, 3000, 50), 'the give-back removed it')
  proxy.restore()
  t.equal((await counter.hit('k', newAttemptId(), 5)).attempts, 1, 'the held answers arrive in order and the client goes on')
})

t.test('Redis counter: a give-back Redis could not take is sent once the client reconnects', { skip }, async (t) => {
  const { counter, proxy, direct, keyOf, cut } = await redisCounter(t, { commandTimeout: STALLED_TIMEOUT_MS })
  proxy.stall()
  const attempt = newAttemptId()
  await t.rejects(counter.hit('k', attempt, 5), { message: 'Command timed out' })
  await cut()
  counter.giveBack('k', attempt)
  t.equal(await direct.hlen(keyOf('k')), 1, 'the give-back could not be sent')
  proxy.restore()
  t.ok(await eventually(async () => await direct.hlen(keyOf('k')) === 0, 3000, 50), 'sent after the reconnection')
  await counter.hit('other', newAttemptId(), 5)
  t.equal(await direct.hlen(keyOf('k')), 0, 'and the client did not send the count again, which would have brought it back')
})

t.test('Redis counter: give-backs waiting for Redis are bounded, the oldest dropped', { skip }, async (t) => {
  const { counter, proxy, direct, keyOf, cut } = await redisCounter(t, { maxUnconfirmedChanges: 2 })
  const attempts = [newAttemptId(), newAttemptId(), newAttemptId()]
  for (const attempt of attempts) await counter.hit('k', attempt, 5)
  await cut()
  for (const attempt of attempts) counter.giveBack('k', attempt)
  proxy.restore()
  t.ok(await eventually(async () => await direct.hlen(keyOf('k')) === 1, 3000, 50), 'two were given back after the reconnection')
  t.same(await direct.hkeys(keyOf('k')), [attempts[0]], 'the oldest still counts')
})
