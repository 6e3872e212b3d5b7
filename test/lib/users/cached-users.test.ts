import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import BetterSqlite3 from '../../../lib/store/better-sqlite3.js'
import { Database, type UserCounters } from '../../../lib/store/database.js'
import { CachedUsers } from '../../../lib/users/cached-users.js'

/**
 * A directory on a fresh SQLite file, the number of counter reads it made, and a second
 * connection that commits at once (synchronously), as `meridian user add` or another replica does.
 */
async function directoryWithWriter (t: Test) {
  const file = join(t.testdir(), 'meridian.db')
  const store = Database.open(`sqlite:${file}`)
  await store.migrate()
  const writer = new BetterSqlite3(file)
  t.teardown(async () => { writer.close(); await store.close() })
  let reads = 0
  const stats = store.counters.bind(store)
  store.counters = async () => { reads++; return await stats() }
  const insert = writer.prepare("insert into users (username, password_hash, name, birthdate, gender, short_desc, created_at) values (?, 'x', 'n', '1990-01-01', 'female', '', 0)")
  return {
    directory: new CachedUsers(store),
    store,
    reads: () => reads,
    addUser: (username: string) => { insert.run(username) }
  }
}

t.test('the requests of one event-loop turn share one counter read, made after the last of them asked', async (t) => {
  const { directory, reads, addUser } = await directoryWithWriter(t)
  const first = directory.latestCounters()
  const second = directory.latestCounters()
  // Committed after the first request asked but before the second: the second must see it, and
  // the first may (its answer is not yet given).
  addUser('ada')
  const third = directory.latestCounters()
  const answers = await Promise.all([first, second, third])
  t.equal(reads(), 1, 'one read for the three')
  t.same(answers.map((stats) => stats.userCount), [1, 1, 1], 'every one of them sees the user added before the last asked')
})

t.test('a request in a later turn gets a read of its own', async (t) => {
  const { directory, reads, addUser } = await directoryWithWriter(t)
  t.equal((await directory.latestCounters()).userCount, 0)
  addUser('ada')
  t.equal((await directory.latestCounters()).userCount, 1, 'a user added after the earlier read is counted')
  await nextTurn()
  addUser('grace')
  t.equal((await directory.latestCounters()).userCount, 2)
  t.equal(reads(), 3)
})

t.test('a request that arrives while a read is under way waits for a read of its own (as on PostgreSQL)', async (t) => {
  // A read sees the database as of its start and answers later.
  let userCount = 0
  let reads = 0
  const answerReads: Array<() => void> = []
  const store = {
    async counters (): Promise<UserCounters> {
      reads++
      const seen = { userCount, membersVersion: userCount, credentialsVersion: userCount, sessionsVersion: userCount }
      await new Promise<void>((resolve) => answerReads.push(resolve))
      return seen
    }
  } as unknown as Database
  const directory = new CachedUsers(store)
  const first = directory.latestCounters()
  await nextTurn()
  t.equal(reads, 1, 'the first read is under way')
  userCount = 1
  const second = directory.latestCounters()
  await nextTurn()
  for (const answer of answerReads.splice(0)) answer()
  t.equal((await first).userCount, 0)
  t.equal((await second).userCount, 1, 'the later request sees the change committed after the first read began')
  t.equal(reads, 2)
})

t.test('a failed read fails the requests that shared it, and the next turn reads again', async (t) => {
  const { directory, store, reads } = await directoryWithWriter(t)
  const working = store.counters
  store.counters = async () => { throw new Error('database went away') }
  await Promise.all([directory.latestCounters(), directory.latestCounters()].map(async (request) => { await t.rejects(request, /database went away/) }))
  store.counters = working
  t.equal((await directory.latestCounters()).userCount, 0, 'the next read is made')
  t.equal(reads(), 1, 'by the store that works again')
})

t.test('counters told by the database (PostgreSQL\'s feed) spare every read while it vouches for them, and never go back', async (t) => {
  const { directory, reads, addUser, store } = await directoryWithWriter(t)
  const empty: UserCounters = { userCount: 0, membersVersion: 0, credentialsVersion: 0, sessionsVersion: 0 }
  let told: UserCounters | undefined = empty
  const feed = { current: () => told, get live () { return told !== undefined } }
  const toldDirectory = new CachedUsers(store, feed)
  t.equal(toldDirectory.countersTold, true)
  t.same(await toldDirectory.latestCounters(), told, 'the told counters are the request\'s')
  await toldDirectory.latestCounters()
  t.equal(reads(), 0, 'and no request reads them')

  // Taken at the end of the turn, for every call of it: the turn's answers are written together.
  const toldLater: UserCounters = { ...empty }
  const calls = [toldDirectory.latestCounters(), toldDirectory.latestCounters()]
  told = toldLater
  t.ok((await Promise.all(calls)).every((counters) => counters === toldLater), 'the calls of one turn share the counters told once the turn ends')

  told = undefined
  addUser('ada')
  t.equal(toldDirectory.countersTold, false)
  t.equal((await toldDirectory.latestCounters()).userCount, 1, 'while the feed vouches for nothing, each request reads them, as without it')
  t.equal(reads(), 1)

  told = empty
  t.equal((await toldDirectory.latestCounters()).userCount, 1, 'counters older than a read already made are not taken')
  t.equal(directory.countersTold, undefined, 'a directory without a feed says so')
})
