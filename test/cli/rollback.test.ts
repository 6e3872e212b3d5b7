import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import BetterSqlite3 from '../../lib/store/better-sqlite3.js'
import { TEST_JWT_SECRET } from '../support/helper.js'
import { postgresDatabase, postgresSkip } from '../support/postgres.js'
import { type CliResult, runMeridian } from '../support/meridian.js'

/** A migration that a later release adds: this one does not know it. */
const FUTURE_MIGRATION = '9999_from_a_later_release'

async function meridian (args: string[], databaseUrl: string): Promise<CliResult> {
  return await runMeridian(args, { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', LOG_LEVEL: 'silent' }, '', { timeoutMs: 30_000 })
}

/** Migrates the database with this release, then records one more migration as a later release would. */
async function oneMigrationAhead (t: Test, databaseUrl: string, record: (statement: string) => Promise<void>, ownLatest: string): Promise<void> {
  const migrated = await meridian(['migrate'], databaseUrl)
  t.equal(migrated.code, 0, migrated.stderr)
  await record(`insert into kysely_migration (name, timestamp) values ('${FUTURE_MIGRATION}', '2027-01-01T00:00:00.000Z')`)
  for (const command of [['serve'], ['migrate'], ['user', 'sessions', 'nobody']]) {
    const run = await meridian(command, databaseUrl)
    t.equal(run.code, 1, `meridian ${command.join(' ')} exits 1 at once, not a process that stays up`)
    const lines = run.stderr.trim().split('\n')
    t.equal(lines.length, 1, `in one line: ${run.stderr.trim()}`)
    t.match(lines[0], FUTURE_MIGRATION, 'naming the database\'s migration')
    t.match(lines[0], ownLatest, 'and this release\'s latest')
    t.match(lines[0], '"Roll back"', 'and where the guide says what to do')
  }
}

t.test('a release refuses a database migrated past what it knows (a rollback too far), in one line', async (t) => {
  await t.test('SQLite', async (t) => {
    const file = join(t.testdir(), 'ahead.db')
    await oneMigrationAhead(t, `sqlite:${file}`, async (statement) => {
      const database = new BetterSqlite3(file)
      database.exec(statement)
      database.close()
    }, '0004_sessions')
  })
  await t.test('PostgreSQL', { skip: postgresSkip }, async (t) => {
    const url = await postgresDatabase(t, 'meridian_rollback')
    await oneMigrationAhead(t, url, async (statement) => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(statement)
      await client.end()
    }, '0005_counters_notify')
  })
})

t.test('an SQLite file that cannot be opened is one line, not a stack', async (t) => {
  const notAFile = join(t.testdir(), 'a-directory.db')
  mkdirSync(notAFile)
  for (const command of [['serve'], ['migrate']]) {
    const run = await meridian(command, `sqlite:${notAFile}`)
    t.equal(run.code, 1)
    t.same(run.stderr.trim().split('\n').length, 1, run.stderr.trim())
    t.match(run.stderr, `SQLite cannot open ${notAFile}`)
  }
})
