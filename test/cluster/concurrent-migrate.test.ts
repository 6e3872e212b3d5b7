import { randomBytes } from 'node:crypto'
import t from 'tap'
import pg from 'pg'
import { runMeridian } from './harness.js'

const postgresUrl = process.env.TEST_DATABASE_URL
const PROCESSES = 5
const ROUNDS = 5

const migrate = async (databaseUrl: string) => await runMeridian(['migrate'], { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl })

t.test(`${PROCESSES} \`meridian migrate\` at once on a fresh PostgreSQL database, ${ROUNDS} times`, {
  skip: postgresUrl === undefined ? 'PostgreSQL tests skipped: set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) to run them' : false
}, async (t) => {
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  t.teardown(async () => { await admin.end() })

  for (let round = 1; round <= ROUNDS; round++) {
    const name = `meridian_migrate_${randomBytes(6).toString('hex')}`
    await admin.query(`CREATE DATABASE ${name}`)
    try {
      const databaseUrl = Object.assign(new URL(postgresUrl as string), { pathname: `/${name}` }).toString()
      const runs = await Promise.all(Array.from({ length: PROCESSES }, async () => await migrate(databaseUrl)))
      t.same(runs.map((run) => run.code), Array(PROCESSES).fill(0), `round ${round}: every process exits 0`, { stderr: runs.map((run) => run.stderr).join('') })
      t.equal(runs.filter((run) => run.stdout === 'applied 0001_users\n').length, 1, `round ${round}: one process applies the migration`)
      t.equal(runs.filter((run) => run.stdout === 'database schema is up to date\n').length, PROCESSES - 1, `round ${round}: the others find it applied`)

      const database = new pg.Client({ connectionString: databaseUrl })
      await database.connect()
      try {
        const { rows } = await database.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')
        t.same(rows.map((row) => row.name), ['0001_users'], `round ${round}: the migration is recorded once`)
        const { rows: tables } = await database.query<{ count: string }>("SELECT count(*) FROM pg_tables WHERE tablename = 'users'")
        t.equal(tables[0]?.count, '1', `round ${round}: the users table exists`)
      } finally {
        await database.end()
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
})
