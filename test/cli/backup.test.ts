import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import BetterSqlite3 from '../../lib/store/better-sqlite3.js'
import { Database, type NewUser } from '../../lib/store/database.js'
import { addUser, build, login, TEST_JWT_SECRET } from '../support/helper.js'
import { type CliResult, runMeridian } from '../support/meridian.js'
import { createPostgresDatabase, postgresSkip, postgresUrl } from '../support/postgres.js'
import { inRepository } from '../support/repository.js'

/** The guide's `docker compose exec -T postgres …` lines, in order (docs/operations.md). */
function guideComposePostgresCommands (): string[] {
  const guide = readFileSync(inRepository('docs', 'operations.md'), 'utf8')
  return [...guide.matchAll(/^(?: *|.*`)(docker compose exec -T postgres [^`\n]+)/gm)].map((match) => match[1]!.trim())
}

/**
 * Runs one of them in `directory` with `docker` standing in (test/support/docker-compose-postgres.mjs), the compose
 * file's user and database (`meridian`, checked in test/cluster/compose.test.ts) mapped to the test server and `database`.
 */
function runComposeLine (line: string, database: string, directory: string): void {
  const server = new URL(postgresUrl!)
  const standIn = join(directory, 'bin')
  if (!existsSync(standIn)) {
    mkdirSync(standIn)
    symlinkSync(inRepository('test', 'support', 'docker-compose-postgres.mjs'), join(standIn, 'docker'))
  }
  execFileSync('sh', ['-c', line], {
    cwd: directory,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      PATH: `${standIn}:${process.env.PATH ?? ''}`,
      PGHOST: server.hostname,
      PGPORT: server.port === '' ? '5432' : server.port,
      PGPASSWORD: decodeURIComponent(server.password),
      STAND_IN_COMPOSE_NAME: 'meridian',
      STAND_IN_PGUSER: decodeURIComponent(server.username),
      STAND_IN_DATABASE: database
    }
  })
}

const newUser = (username: string): NewUser => ({ username, passwordHash: 'x', name: username, birthdate: '1990-01-01', gender: 'female', shortDesc: '' })

async function meridian (args: string[], databaseUrl: string): Promise<CliResult> {
  return await runMeridian(args, { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET }, '', { timeoutMs: 60_000 })
}

/** The usernames of a users table, in id order, and what its counters say. */
function contentsOf (file: string): { usernames: string[], sessionsOf: Set<number>, ids: number[], userCount: number } {
  const database = new BetterSqlite3(file, { readonly: true })
  try {
    const users = database.prepare('select id, username from users order by id').all() as Array<{ id: number, username: string }>
    const sessions = database.prepare('select user_id from sessions').pluck().all() as number[]
    const userCount = database.prepare('select user_count from user_counters').pluck().get() as number
    return { usernames: users.map((user) => user.username), ids: users.map((user) => user.id), sessionsOf: new Set(sessions), userCount }
  } finally {
    database.close()
  }
}

t.test('meridian backup copies the live SQLite database under write load, and restore brings it back', async (t) => {
  const directory = t.testdir()
  const file = join(directory, 'live.db')
  const url = `sqlite:${file}`
  const store = Database.open(url)
  await store.migrate()

  // A writer as a busy service is one: a user and a session for them, again and again, each committed.
  const committed: string[] = []
  let writing = true
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const user = await store.add(newUser(`user-${i}`))
      await store.sessions.start(user.id, Date.now() + 3_600_000)
      committed.push(user.username)
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  while (committed.length < 200) await new Promise((resolve) => setTimeout(resolve, 5))
  const committedBefore = committed.length
  const backupFile = join(directory, 'backup.db')
  const backup = await meridian(['backup', backupFile], url)
  const committedAfter = committed.length
  writing = false
  await writer
  t.equal(backup.code, 0, backup.stderr)
  t.match(backup.stdout, /^backed up \d+ users and \d+ sessions to .*backup\.db \(integrity check: ok\)\n$/)
  t.ok(committedAfter > committedBefore, `the writer went on during the backup (${committedAfter - committedBefore} more users)`)

  const copy = contentsOf(backupFile)
  t.ok(copy.usernames.length >= committedBefore, `every user committed before the backup began is in it (${copy.usernames.length} of ${committedBefore})`)
  t.same(copy.usernames, committed.slice(0, copy.usernames.length), 'one snapshot: the users committed up to a point, none missing in between')
  t.equal(copy.userCount, copy.usernames.length, 'and its counters agree with it')
  const withSession = copy.ids.filter((id) => copy.sessionsOf.has(id)).length
  t.ok(withSession >= copy.ids.length - 1, 'every user\'s session is there but perhaps the last one\'s, committed after it')

  t.equal((await meridian(['backup', backupFile], url)).code, 1, 'an existing file is never overwritten')

  // The app holds the database open, as a running replica does: restore refuses.
  const app = await build(t, { DATABASE_URL: url })
  const refused = await meridian(['restore', backupFile], url)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^meridian: .*live\.db is in use by another process: stop every replica/)
  t.equal(refused.stderr.trim().split('\n').length, 1, 'in one line')
  await app.close()
  await store.close()
  t.equal(contentsOf(file).usernames.length, committed.length, 'and the database was left as it was')

  const restored = await meridian(['restore', backupFile], url)
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, `restored ${backupFile} into ${file}: ${copy.usernames.length} users`)
  t.same(contentsOf(file).usernames, copy.usernames, 'the database holds what the backup held')

  const after = await build(t, { DATABASE_URL: url })
  await addUser(after, { username: 'after-restore', password: 'after-restore-password' })
  t.ok((await login(after, 'after-restore', 'after-restore-password')).access_token, 'and the service runs on it')
})

t.test('restore refuses a file that is not a sound Meridian database', async (t) => {
  const directory = t.testdir({ 'not-a-database.db': 'hello' })
  const url = `sqlite:${join(directory, 'live.db')}`
  const run = await meridian(['restore', join(directory, 'not-a-database.db')], url)
  t.equal(run.code, 1)
  t.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
})

t.test('on PostgreSQL, backup points to pg_dump, and the guide\'s pg_dump and pg_restore commands restore a working database', { skip: postgresSkip }, async (t) => {
  const source = await createPostgresDatabase()
  const target = await createPostgresDatabase()
  t.teardown(async () => { await source.drop(); await target.drop() })
  const pointed = await meridian(['backup', join(t.testdir(), 'x.db')], source.url)
  t.equal(pointed.code, 1)
  t.match(pointed.stderr, 'pg_dump')

  const app = await build(t, { DATABASE_URL: source.url })
  await addUser(app, { username: 'dumped', password: 'dumped-password' })
  await login(app, 'dumped', 'dumped-password')
  const dump = join(t.testdir(), 'meridian.dump')
  // The commands of docs/operations.md, "Back up and restore", from a host that reaches the database.
  execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, source.url])
  execFileSync('pg_restore', ['--no-owner', `--dbname=${target.url}`, dump])
  // And with deploy/compose.yaml, as the guide writes them, through a stand-in for `docker compose exec -T postgres`.
  const compose = await createPostgresDatabase()
  t.teardown(compose.drop)
  const lines = guideComposePostgresCommands()
  const dumpLines = lines.filter((line) => line.includes(' pg_dump '))
  const restoreLines = lines.filter((line) => !line.includes(' pg_dump '))
  t.ok(dumpLines.length > 0, 'the guide backs up with pg_dump in the container')
  t.same(restoreLines.map((line) => line.split(' ')[5]), ['dropdb', 'createdb', 'pg_restore'], 'and restores into an empty database')
  for (const dumpLine of dumpLines) {
    const directory = mkdtempSync(join(tmpdir(), 'meridian-compose-dump-'))
    t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
    runComposeLine(dumpLine, source.name, directory)
    const [dumped] = readdirSync(directory).filter((file) => file.endsWith('.dump'))
    t.ok(dumped, `${dumpLine}: wrote its dump`)
    for (const line of restoreLines) runComposeLine(line.replace(/< \S+\.dump$/, `< ${dumped}`), compose.name, directory)
  }
  await app.close()
  const fromCompose = await build(t, { DATABASE_URL: compose.url })
  t.ok((await login(fromCompose, 'dumped', 'dumped-password')).access_token, 'the compose commands restore a database that serves the user')
  await fromCompose.close()

  const restored = await build(t, { DATABASE_URL: target.url })
  t.ok((await login(restored, 'dumped', 'dumped-password')).access_token, 'the restored database serves the user')
  const counters = await restored.database.counters()
  t.equal(counters.userCount, 1, 'with its counters')
  t.equal(counters.sessionsVersion, 0)
  await restored.database.changePassword('dumped', 'x')
  t.ok((await restored.database.counters()).credentialsVersion > counters.credentialsVersion, 'and its triggers')
})
