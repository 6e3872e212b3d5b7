import { join } from 'node:path'
import t, { type Test } from 'tap'
import BetterSqlite3 from '../../../lib/store/better-sqlite3.js'
import pg from 'pg'
import { ANCHOR_STEPS_PER_TURN, Database, UsernameTakenError, type NewUser } from '../../../lib/store/database.js'
import { build } from '../../support/helper.js'
import { postgresDatabase, postgresSkip } from '../../support/postgres.js'

const newUser = (username: string, overrides: Partial<NewUser> = {}): NewUser => ({
  username, passwordHash: `hash-of-${username}`, name: username, birthdate: '1991-03-04', gender: 'female', shortDesc: 'hi', ...overrides
})

/** The same behaviour is asked of every database the store speaks. */
async function storeContract (t: Test, databaseUrl: string) {
  const store = Database.open(databaseUrl)
  t.teardown(async () => { await store.close() })
  const notifications = databaseUrl.startsWith('postgres') ? ['0005_counters_notify'] : []
  t.same(await store.migrate(), ['0001_users', '0002_user_stats', '0003_user_counters', '0004_sessions', ...notifications], 'the migrations apply')
  t.same(await store.migrate(), [], 'and only once')
  await store.ping()

  t.same(await store.counters(), { userCount: 0, membersVersion: 0, credentialsVersion: 0, sessionsVersion: 0 })
  const ada = await store.add(newUser('ada'), 1_700_000_000_000)
  const grace = await store.add(newUser('grace', { birthdate: '1906-12-09', shortDesc: '' }))
  t.match(ada, { id: Number, username: 'ada', passwordHash: 'hash-of-ada', birthdate: '1991-03-04', tokenVersion: 0, lastSeenAt: null, createdAt: 1_700_000_000_000 })
  t.ok(grace.id > ada.id, 'ids ascend')
  await t.rejects(store.add(newUser('ada')), UsernameTakenError)

  t.equal(await store.count(), 2)
  t.match(await store.counters(), { userCount: 2, credentialsVersion: 0 }, 'adding users leaves every token valid')
  const afterAdding = await store.counters()
  t.ok(afterAdding.membersVersion > 0, 'but moves the members version')
  t.same(await store.list(0, 1), [{ id: ada.id, name: ada.name, birthdate: '1991-03-04', gender: ada.gender, shortDesc: ada.shortDesc, lastSeenAt: null }],
    'a page holds what the directory shows, and no username, password hash or token version')
  t.same((await store.list(1, 10)).map((u) => u.id), [grace.id])
  t.same(await store.list(5, 10), [])

  const { membersVersion } = await store.counters()
  t.same(await store.pageFrom(grace.id, 0, 10), { userCount: 2, membersVersion, users: await store.list(1, 10) }, 'a page may start from an id, and carries its counters')
  t.same(await store.pageFrom(0, 5, 10), { userCount: 2, membersVersion, users: [] }, 'an empty page carries them too')
  t.same(await store.idsEvery(1), { membersVersion, ids: [ada.id, grace.id] })
  t.same(await store.idsEvery(2), { membersVersion, ids: [ada.id] })

  await store.recordActivity(new Map([[ada.id, 1_800_000_000_000], [grace.id, 1_700_000_000_000], [999_999, 1]]))
  t.equal((await store.findById(ada.id))?.lastSeenAt, 1_800_000_000_000, 'a time past 2038 survives')
  t.equal((await store.findById(grace.id))?.lastSeenAt, 1_700_000_000_000, 'several users in one statement')
  await store.recordActivity(new Map([[ada.id, 1_750_000_000_000]]))
  t.equal((await store.findById(ada.id))?.lastSeenAt, 1_800_000_000_000, 'an earlier time (from a slower replica) never moves it back')
  t.same(await store.counters(), afterAdding, 'activity moves no counter')

  await store.replacePasswordHash(ada.id, 'hash-of-ada', 'rehashed')
  t.same(await store.counters(), afterAdding, 'nor does a rehash of the same password')
  t.equal(await store.changePassword('ada', 'new-hash'), true)
  t.match(await store.findByUsername('ada'), { passwordHash: 'new-hash', tokenVersion: 1 })
  const afterPasswordChange = await store.counters()
  t.ok(afterPasswordChange.credentialsVersion > afterAdding.credentialsVersion, 'a password change moves the credentials version')
  t.equal(afterPasswordChange.membersVersion, afterAdding.membersVersion, 'and leaves the id order as it was')
  t.equal(await store.changePassword('nobody', 'x'), false)

  await store.replacePasswordHash(ada.id, 'stale-hash', 'ignored')
  t.equal((await store.findById(ada.id))?.passwordHash, 'new-hash', 'a rehash never overwrites a newer password')
  await store.replacePasswordHash(ada.id, 'new-hash', 'stronger-hash')
  t.match(await store.findById(ada.id), { passwordHash: 'stronger-hash', tokenVersion: 1 })

  t.equal(await store.remove('grace'), true)
  t.equal(await store.remove('grace'), false)
  t.equal(await store.findByUsername('grace'), undefined)
  t.equal(await store.findById(grace.id), undefined)
  const afterRemoval = await store.counters()
  t.equal(afterRemoval.userCount, 1)
  t.ok(afterRemoval.membersVersion > afterPasswordChange.membersVersion && afterRemoval.credentialsVersion > afterPasswordChange.credentialsVersion,
    'a removal moves both versions')
  await store.addMany([newUser('x1'), newUser('x2'), newUser('x3')])
  t.equal((await store.counters()).userCount, 4, 'a batch insert counts every row')
}

/** Sessions: started, used, ended once by each cause, counted by the sessions version, pruned. */
async function sessionsContract (t: Test, databaseUrl: string) {
  const store = Database.open(databaseUrl)
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const { sessions } = store
  const ada = await store.add(newUser('s-ada'))
  const grace = await store.add(newUser('s-grace'))
  const now = Date.now()
  const day = 86_400_000
  const version = async () => (await store.counters()).sessionsVersion
  const before = await version()

  const first = await sessions.start(ada.id, now + 30 * day, now - 1000)
  const second = await sessions.start(ada.id, now + 30 * day, now)
  const graces = await sessions.start(grace.id, now + 30 * day, now)
  t.match(first, { userId: ada.id, startedAt: now - 1000, lastUsedAt: now - 1000, expiresAt: now + 30 * day })
  t.match(first.id, /^[A-Za-z0-9_-]{22}$/, 'a random id of 128 bits')
  t.not(first.id, second.id)
  t.same(await sessions.findOpen(first.id), { userId: ada.id, expiresAt: now + 30 * day })
  t.equal(await version(), before, 'starting sessions moves no version: a session unknown to a replica is read')

  await sessions.recordUse(new Map([[second.id, now + 5000], [graces.id, now + 2000]]))
  await sessions.recordUse(new Map([[second.id, now + 1000]]))
  t.same((await sessions.listOpen(ada.id, now)).map((s) => [s.id, s.lastUsedAt]), [[first.id, now - 1000], [second.id, now + 5000]],
    'open sessions, oldest first; a last use never moves back')
  t.equal(await version(), before, 'nor does their use')

  t.equal(await sessions.end(first.id, grace.id, 'logout'), false, 'a session ends only as its own user\'s')
  t.equal(await sessions.end(first.id, ada.id, 'logout'), true)
  t.equal(await sessions.end(first.id, ada.id, 'logout'), false, 'and only once')
  t.equal(await sessions.findOpen(first.id), undefined)
  const afterLogout = await version()
  t.equal(afterLogout, before + 1, 'an end moves the sessions version, once')
  t.same((await sessions.listOpen(ada.id, now)).map((s) => s.id), [second.id])

  const expired = await sessions.start(grace.id, now - 1, now - 2 * day)
  t.same((await sessions.listOpen(grace.id, now)).map((s) => s.id), [graces.id], 'an expired session is not listed as open')
  t.equal(await store.changePassword('s-ada', 'new-hash'), true)
  t.equal(await sessions.findOpen(second.id), undefined, 'a password change ends the user\'s sessions')
  t.ok(await version() > afterLogout, 'and moves the sessions version')
  t.same(await sessions.findOpen(graces.id), { userId: grace.id, expiresAt: now + 30 * day }, 'not another user\'s')
  await sessions.start(grace.id, now + day, now)
  t.equal(await sessions.endAllOf(grace.id, 'operator'), 2, 'the operator ends every open session of a user')
  t.equal(await sessions.endAllOf(grace.id, 'operator'), 0)
  const removed = await sessions.start(grace.id, now + day, now)
  t.equal(await store.remove('s-grace'), true)
  t.equal(await sessions.findOpen(removed.id), undefined, 'a removal ends the user\'s sessions')

  const open = await sessions.start(ada.id, now + day, now)
  const beforePruning = await version()
  const causes: string[] = []
  for (let batch = await sessions.pruneSome(now, 2); batch.length > 0; batch = await sessions.pruneSome(now, 2)) causes.push(...batch)
  t.same(causes.sort(), ['expiry', 'logout', 'operator', 'operator', 'password', 'removal'], 'pruning deletes every ended and expired session, each with its cause')
  t.equal(await version(), beforePruning, 'pruning moves no version: those sessions were refused already')
  t.same((await sessions.listOpen(ada.id, now)).map((s) => s.id), [open.id], 'the open session stays')
  t.same(await sessions.findOpen(open.id), { userId: ada.id, expiresAt: now + day })
  t.equal(await sessions.findOpen(expired.id), undefined)
  t.same(await sessions.pruneSome(now, 10), [], 'nothing is left to prune')
}

t.test('SQLite store', async (t) => {
  await storeContract(t, `sqlite:${join(t.testdir(), 'store.db')}`)
})

t.test('SQLite sessions', async (t) => {
  await sessionsContract(t, `sqlite:${join(t.testdir(), 'sessions.db')}`)
})

t.test('migration 0002 on an embedded database that already has users counts them, and survives a run stopped before it was recorded', async (t) => {
  const file = join(t.testdir(), 'upgrade.db')
  const first = Database.open(`sqlite:${file}`)
  await first.migrate()
  await first.addMany([newUser('a'), newUser('b'), newUser('c')])
  await first.close()
  // As a database of the previous release would be (and as a run of 0002 stopped after its commit).
  const raw = new BetterSqlite3(file)
  raw.exec([...asOfMigration0003.sqlite,
    "DELETE FROM kysely_migration WHERE name IN ('0002_user_stats', '0003_user_counters'); DROP VIEW user_stats; DROP TRIGGER users_inserted; DROP TRIGGER users_deleted; DROP TRIGGER users_revoked; DROP TABLE user_counters"].join(';'))
  raw.close()
  const store = Database.open(`sqlite:${file}`)
  t.teardown(async () => { await store.close() })
  t.same(await store.migrate(), ['0002_user_stats', '0003_user_counters', '0004_sessions'])
  t.match(await store.counters(), { userCount: 3 }, 'the users already there are counted')
  await store.add(newUser('d'))
  t.match(await store.counters(), { userCount: 4 }, 'and the triggers count from there')
})

t.test('on SQLite, reading the page anchors lets the event loop turn every few steps instead of holding it to the end', async (t) => {
  const store = Database.open(`sqlite:${join(t.testdir(), 'anchors.db')}`)
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const users = 320
  await store.addMany(Array.from({ length: users }, (_, i) => newUser(`u${i}`)))
  // Counts the turns of the event loop (macrotasks) that the read spans: each step resolves at
  // once on SQLite, so without a yield the whole read is one piece, however many steps it takes.
  let turns = 0
  let reading = true
  const countTurns = (): void => { if (reading) { turns++; setImmediate(countTurns) } }
  setImmediate(countTurns)
  const anchors = await store.idsEvery(1)
  reading = false
  t.equal(anchors.ids.length, users, `one step per user: ${users} steps`)
  t.ok(turns >= users / ANCHOR_STEPS_PER_TURN, `the loop turned ${turns} times, at least once every ${ANCHOR_STEPS_PER_TURN} steps`)
})

t.test('on SQLite, a write that meets a lock held elsewhere waits for it on a timer and succeeds once it is released', async (t) => {
  const file = join(t.testdir(), 'locked.db')
  const store = Database.open(`sqlite:${file}`)
  t.teardown(async () => { await store.close() })
  await store.migrate()
  const ada = await store.add(newUser('ada'))
  const other = new BetterSqlite3(file)
  t.teardown(() => { other.close() })
  other.exec('BEGIN IMMEDIATE')
  other.prepare("UPDATE users SET short_desc = 'locked'").run()
  // Released by a timer of this same process: it can fire only if the waiting write lets the
  // event loop turn (a synchronous wait runs out first and fails).
  setTimeout(() => { other.exec('COMMIT') }, 200)
  await store.recordActivity(new Map([[ada.id, 1_700_000_000_000]]))
  t.match(await store.findById(ada.id), { lastSeenAt: 1_700_000_000_000, shortDesc: 'locked' }, 'the write went in after the other one')
})

/** Takes a database back to the schema of 0003, before sessions. */
const asOfMigration0003 = {
  sqlite: [
    'DROP TABLE sessions',
    'DROP TRIGGER end_sessions_on_password_change',
    'DROP TRIGGER end_sessions_on_user_removal',
    'ALTER TABLE user_counters DROP COLUMN sessions_version',
    "DELETE FROM kysely_migration WHERE name = '0004_sessions'"
  ],
  postgres: [
    'DROP TRIGGER user_counters_changed ON user_counters',
    'DROP FUNCTION user_counters_changed',
    "DELETE FROM kysely_migration WHERE name = '0005_counters_notify'",
    'DROP TABLE sessions',
    'DROP TRIGGER end_sessions_on_password_change ON users',
    'DROP TRIGGER end_sessions_on_user_removal ON users',
    'DROP TRIGGER end_sessions_on_users_truncated ON users',
    'DROP FUNCTION sessions_ended, end_sessions_on_password_change, end_sessions_on_user_removal, end_sessions_on_users_truncated',
    'ALTER TABLE user_counters DROP COLUMN sessions_version',
    "DELETE FROM kysely_migration WHERE name = '0004_sessions'"
  ]
}

/** Takes a database back to the schema of 0002 (the counters in user_stats), on `dialect`. */
const asOfMigration0002 = (dialect: 'sqlite' | 'postgres') => [
  ...asOfMigration0003[dialect],
  'DROP VIEW user_stats',
  'ALTER TABLE user_counters RENAME TO user_stats',
  "DELETE FROM kysely_migration WHERE name = '0003_user_counters'"
]

/** A database of the previous release migrates: the counters move to user_counters and keep counting. */
async function countersRenamed (t: Test, databaseUrl: string, dialect: 'sqlite' | 'postgres', runOnDatabase: (statements: string[]) => Promise<void>) {
  const first = Database.open(databaseUrl)
  await first.migrate()
  await first.addMany([newUser('r1'), newUser('r2')])
  await first.close()
  await runOnDatabase(asOfMigration0002(dialect))
  const store = Database.open(databaseUrl)
  t.teardown(async () => { await store.close() })
  t.same(await store.migrate(), ['0003_user_counters', '0004_sessions', ...(dialect === 'postgres' ? ['0005_counters_notify'] : [])])
  const before = await store.counters()
  t.equal(before.userCount, 2, 'the counters come along')
  await store.add(newUser('r3'))
  t.equal(await store.changePassword('r1', 'other'), true)
  t.equal(await store.remove('r2'), true)
  const after = await store.counters()
  t.equal(after.userCount, 2, 'the triggers write to the renamed table')
  t.ok(after.membersVersion === before.membersVersion + 2 && after.credentialsVersion === before.credentialsVersion + 2, 'every change moves its versions')
}

t.test('migration 0003 renames user_stats to user_counters on an embedded database of the previous release', async (t) => {
  const file = join(t.testdir(), 'rename.db')
  await countersRenamed(t, `sqlite:${file}`, 'sqlite', async (statements) => {
    const raw = new BetterSqlite3(file)
    raw.exec(statements.join(';'))
    raw.close()
  })
  const raw = new BetterSqlite3(file, { readonly: true })
  t.teardown(() => raw.close())
  t.match(raw.prepare('SELECT user_count FROM user_stats').get(), { user_count: 2 }, 'a process of the previous release still reads the counters under the old name')
})

t.test('PostgreSQL store and app', { skip: postgresSkip }, async (t) => {
  const url = await postgresDatabase(t)

  await t.test('store contract', async (t) => { await storeContract(t, url) })

  await t.test('sessions', async (t) => { await sessionsContract(t, await postgresDatabase(t)) })

  await t.test('migration 0003 renames user_stats to user_counters', async (t) => {
    const second = await postgresDatabase(t)
    await countersRenamed(t, second, 'postgres', async (statements) => {
      const client = new pg.Client({ connectionString: second })
      await client.connect()
      for (const statement of statements) await client.query(statement)
      await client.end()
    })
  })

  await t.test('a user removed while one of their sessions is being ended: no deadlock, both complete', async (t) => {
    const database = await postgresDatabase(t)
    const store = Database.open(database)
    t.teardown(async () => { await store.close() })
    await store.migrate()
    const ada = await store.add(newUser('ada-removed-during-logout'))
    const logout = new pg.Client({ connectionString: database })
    const removal = new pg.Client({ connectionString: database })
    await Promise.all([logout.connect(), removal.connect()])
    t.teardown(async () => { await Promise.all([logout.end(), removal.end()]) })
    const now = Date.now()
    await logout.query('INSERT INTO sessions (id, user_id, started_at, last_used_at, expires_at) VALUES ($1, $2, $3, $3, $4)', ['s-removal', ada.id, now, now + 3_600_000])
    // The logout's transaction holds the session row (as the batched last-use write does) ...
    await logout.query('BEGIN')
    await logout.query('UPDATE sessions SET last_used_at = last_used_at + 1 WHERE id = $1', ['s-removal'])
    // ... while the removal starts and waits for that row ...
    const { rows: [{ pid }] } = await removal.query('SELECT pg_backend_pid() AS pid')
    const removed = removal.query('DELETE FROM users WHERE id = $1', [ada.id]).then(() => 'removed', (error: { code?: string }) => `failed (${error.code ?? String(error)})`)
    for (let waiting = false; !waiting;) {
      waiting = (await logout.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [pid])).rows.length > 0
    }
    // ... then ends the session, which moves the counters: it must not wait on the removal.
    const ended = await logout.query("UPDATE sessions SET ended_at = $1, end_cause = 'logout' WHERE id = $2", [now, 's-removal'])
      .then(async () => { await logout.query('COMMIT'); return 'ended' }, async (error: { code?: string }) => { await logout.query('ROLLBACK'); return `failed (${error.code ?? String(error)})` })
    t.same([ended, await removed], ['ended', 'removed'])
    t.match((await logout.query('SELECT end_cause FROM sessions WHERE id = $1', ['s-removal'])).rows, [{ end_cause: 'logout' }])
  })

  await t.test('TRUNCATE moves the counters too', async (t) => {
    const store = Database.open(url)
    t.teardown(async () => { await store.close() })
    await store.migrate()
    const before = await store.counters()
    t.ok(before.userCount > 0)
    const direct = new pg.Client({ connectionString: url })
    await direct.connect()
    await direct.query('TRUNCATE users')
    await direct.end()
    const after = await store.counters()
    t.equal(after.userCount, 0)
    t.ok(after.credentialsVersion > before.credentialsVersion && after.membersVersion > before.membersVersion, 'every token check and page reads afresh')
  })

  await t.test('login, list and revocation through the app', async (t) => {
    const app = await build(t, { DATABASE_URL: url })
    const { hashPassword } = await import('../../../lib/auth/passwords.js')
    await app.database.add(newUser('pg-user', { passwordHash: await hashPassword('pg-password') }))
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'pg-user', password: 'pg-password' } })
    t.equal(login.statusCode, 200)
    const token = login.json().access_token as string
    const page = await app.inject({ url: `/api/user/list?access_token=${token}` })
    t.equal(page.statusCode, 200)
    t.match(page.json().data.find((u: { name: string }) => u.name === 'pg-user'), { online: true, birthdate: '1991-03-04' })
    t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200)

    // One answer, one snapshot: a user committed between the token check's counters (read, or told
    // by the database) and the page read (on another pool connection) is in both the count and the data.
    const pageFrom = app.database.pageFrom.bind(app.database)
    let addFirst = true
    app.database.pageFrom = async (...args) => {
      if (addFirst) { addFirst = false; await app.database.add(newUser('pg-late')) }
      return await pageFrom(...args)
    }
    // Another page size: not the page read above, which the cache may serve as of its own snapshot.
    const { meta, data } = (await app.inject({ url: `/api/user/list?per_page=50&access_token=${token}` })).json()
    t.equal(addFirst, false)
    t.equal(meta.count_total, data.length, 'the count agrees with the page')
    t.ok(data.some((u: { name: string }) => u.name === 'pg-late'), 'which shows the user added')

    await app.database.changePassword('pg-user', 'other')
    const refusedWithin = async (boundMs: number): Promise<boolean> => {
      const start = performance.now()
      do {
        if ((await app.inject({ url: `/api/user/list?access_token=${token}` })).statusCode === 403) return true
      } while (performance.now() - start < boundMs)
      return false
    }
    t.ok(await refusedWithin(1000), 'a password change refuses the token within 1 s')
  })
})
