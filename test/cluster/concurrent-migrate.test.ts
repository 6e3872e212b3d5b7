import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import pg from 'pg'
import { postgresDatabase, postgresSkip } from '../support/postgres.js'
import { runMeridian } from '../support/meridian.js'
import { clusterTestSkip, freePort, Replica } from './harness.js'

/** Part of the cluster group (processes racing on one database), and it needs PostgreSQL. */
const skip = clusterTestSkip !== false ? clusterTestSkip : postgresSkip
const PROCESSES = 5
const ROUNDS = 3
/** Replicas started together, that many times. */
const REPLICA_ROUNDS = 2

/** The migrations recorded, in order, and whether the users table exists. */
async function schemaOf (databaseUrl: string): Promise<{ recorded: string[], usersTables: number }> {
  const database = new pg.Client({ connectionString: databaseUrl })
  await database.connect()
  try {
    const { rows } = await database.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')
    const { rows: tables } = await database.query<{ count: string }>("SELECT count(*) FROM pg_tables WHERE tablename = 'users'")
    return { recorded: rows.map((row) => row.name), usersTables: Number(tables[0]?.count) }
  } finally {
    await database.end()
  }
}

t.test(`${PROCESSES} \`meridian migrate\` at once on a fresh PostgreSQL database, ${ROUNDS} times`, { skip }, async (t) => {
  for (let round = 1; round <= ROUNDS; round++) {
    await t.test(`round ${round}`, async (t) => {
      const databaseUrl = await postgresDatabase(t, 'meridian_migrate')
      const runs = await Promise.all(Array.from({ length: PROCESSES }, async () =>
        await runMeridian(['migrate'], { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl })))
      t.same(runs.map((run) => run.code), Array(PROCESSES).fill(0), `round ${round}: every process exits 0`, { stderr: runs.map((run) => run.stderr).join('') })
      t.equal(runs.filter((run) => run.stdout === 'applied 0001_users, 0002_user_stats, 0003_user_counters, 0004_sessions, 0005_counters_notify\n').length, 1, `round ${round}: one process applies the migrations`)
      t.equal(runs.filter((run) => run.stdout === 'database schema is up to date\n').length, PROCESSES - 1, `round ${round}: the others find it applied`)
      t.same(await schemaOf(databaseUrl), { recorded: ['0001_users', '0002_user_stats', '0003_user_counters', '0004_sessions', '0005_counters_notify'], usersTables: 1 }, `round ${round}: the migrations are recorded once`)
    })
  }
})

t.test(`replicas started together on a fresh PostgreSQL database migrate it once and all become ready, ${REPLICA_ROUNDS} times`, { skip }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'meridian-migrate-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  for (let round = 1; round <= REPLICA_ROUNDS; round++) {
    await t.test(`round ${round}`, async (t) => {
      const databaseUrl = await postgresDatabase(t, 'meridian_migrate')
      const replicas = await Promise.all([0, 1, 2].map(async (index) => {
        const host = '127.0.1.3'
        const port = await freePort(host)
        const env = { PATH: process.env.PATH ?? '', NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(48), DATABASE_URL: databaseUrl, HOST: host, PORT: String(port), LOG_LEVEL: 'warn' }
        return new Replica(index, { host, port }, env, join(directory, `round-${round}-replica-${index}.log`), 30_000)
      }))
      try {
        const starts = await Promise.allSettled(replicas.map(async (replica) => { await replica.start() }))
        t.same(starts.map((start) => start.status === 'fulfilled' ? 'ready' : String(start.reason)), ['ready', 'ready', 'ready'], `round ${round}: every replica is ready`)
        t.same(await schemaOf(databaseUrl), { recorded: ['0001_users', '0002_user_stats', '0003_user_counters', '0004_sessions', '0005_counters_notify'], usersTables: 1 }, `round ${round}: the migrations are recorded once`)
      } finally {
        // SIGINT skips the drain, which the rollout tests cover.
        const exits = await Promise.all(replicas.filter((replica) => replica.running).map(async (replica) => await replica.stop('SIGINT')))
        t.ok(exits.every((exit) => exit.code === 0), `round ${round}: every replica exits 0 on SIGINT`)
      }
    })
  }
})
