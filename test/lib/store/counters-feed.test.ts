import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t, { type Test } from 'tap'
import { HEARTBEAT_MS, SILENCE_MS } from '../../../lib/store/counters-feed.js'
import { Database, type NewUser, type UserCounters } from '../../../lib/store/database.js'
import { postgresDatabase, postgresSkip } from '../../support/postgres.js'
import { TcpProxy } from '../../support/tcp-proxy.js'

const newUser = (username: string): NewUser => ({ username, passwordHash: 'x', name: username, birthdate: '1990-01-01', gender: 'female', shortDesc: '' })

/** Polls `check` every few ms until it holds or `boundMs` passes; how long it took, or undefined. */
async function within (boundMs: number, check: () => boolean): Promise<number | undefined> {
  const start = performance.now()
  while (performance.now() - start < boundMs) {
    if (check()) return performance.now() - start
    await sleep(2)
  }
  return check() ? performance.now() - start : undefined
}

/** A migrated database, a store to change it with (another replica, the CLI), and a way to open more stores on it. */
async function database (t: Test) {
  const url = await postgresDatabase(t, 'meridian_feed')
  const writer = Database.open(url)
  await writer.migrate()
  t.teardown(async () => { await writer.close() })
  return { url, writer }
}

const moved = (before: UserCounters | undefined, now: UserCounters | undefined, key: keyof UserCounters): boolean =>
  before !== undefined && now !== undefined && now[key] > before[key]

t.test('the counters feed on PostgreSQL', { skip: postgresSkip }, async (t) => {
  await t.test('each change committed elsewhere is told at once, not at the next heartbeat', async (t) => {
    const { url, writer } = await database(t)
    const replica = Database.open(url)
    // Heartbeats far apart: only a notification can tell the changes in time.
    const feed = replica.countersFeed({}, { heartbeatMs: 60_000, silenceMs: 120_000 })!
    t.teardown(async () => { await feed.close(); await replica.close() })
    feed.start()
    t.ok(await within(5000, () => feed.live), 'the feed vouches for the counters once it listens')

    const changes: Array<[string, keyof UserCounters, () => Promise<unknown>]> = [
      ['a user added', 'membersVersion', async () => await writer.add(newUser('ada'))],
      ['a password changed', 'credentialsVersion', async () => await writer.changePassword('ada', 'y')],
      ['a session ended', 'sessionsVersion', async () => {
        const { id: userId } = (await writer.findByUsername('ada'))!
        const session = await writer.sessions.start(userId, Date.now() + 60_000)
        await writer.sessions.end(session.id, userId, 'logout')
      }],
      ['a user removed', 'credentialsVersion', async () => await writer.remove('ada')]
    ]
    for (const [change, key, make] of changes) {
      const before = feed.current()
      await make()
      const ms = await within(1000, () => moved(before, feed.current(), key))
      t.ok(ms !== undefined, `${change}: told within 1 s${ms === undefined ? '' : ` (${ms.toFixed(1)} ms)`}`)
    }
    t.same(feed.current(), await writer.counters(), 'and the counters told are the database\'s')
  })

  await t.test('a killed listening connection: nothing vouched for until it listens again, and nothing missed meanwhile', async (t) => {
    const { url, writer } = await database(t)
    const replica = Database.open(url)
    const events: string[] = []
    const feed = replica.countersFeed({ lost: () => events.push('lost'), listening: () => events.push('listening') })!
    t.teardown(async () => { await feed.close(); await replica.close() })
    feed.start()
    t.ok(await within(5000, () => feed.live), 'listening')

    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    t.teardown(async () => { await admin.end() })
    const { rows } = await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'meridian counters feed' and datname = current_database()")
    t.equal(rows.length, 1, 'one listening connection for the replica')
    await writer.add(newUser('while-away'))
    t.ok(await within(SILENCE_MS + 1000, () => !feed.live), 'the feed stops vouching')
    const expected = await writer.counters()
    t.ok(await within(5000, () => feed.live), 'and listens again on its own')
    t.ok(feed.current()!.membersVersion >= expected.membersVersion, 'with the change made while it was away')
    t.same(events, ['listening', 'lost', 'listening'], 'saying so once each way')
  })

  await t.test('a silent connection (packets dropped) stops being vouched for within its bound', async (t) => {
    const { url, writer } = await database(t)
    const target = new URL(url)
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) })
    t.teardown(async () => { await proxy.close() })
    const throughProxy = new URL(url)
    throughProxy.port = String(proxy.port)
    const replica = Database.open(throughProxy.toString())
    const feed = replica.countersFeed()!
    t.teardown(async () => { await feed.close(); await replica.close() })
    feed.start()
    t.ok(await within(5000, () => feed.live), 'listening')

    proxy.blackhole()
    const blackholedAt = performance.now()
    await writer.add(newUser('unheard'))
    const ms = await within(SILENCE_MS + 1000, () => !feed.live)
    t.ok(ms !== undefined && performance.now() - blackholedAt <= SILENCE_MS + HEARTBEAT_MS,
      `not vouched for within SILENCE_MS + a heartbeat (${(performance.now() - blackholedAt).toFixed(0)} ms); requests read the counters themselves`)
    proxy.restore()
    t.ok(await within(5000, () => feed.live), 'vouched for again once the network carries')
    t.equal(feed.current()!.userCount, (await writer.counters()).userCount, 'with the change it did not hear')

    // A replica shutting down while the network drops everything is not held by the feed.
    proxy.blackhole()
    const closing = performance.now()
    await feed.close()
    t.ok(performance.now() - closing < 2000, `closing with the network silent takes ${(performance.now() - closing).toFixed(0)} ms`)
    proxy.restore()
  })
})
