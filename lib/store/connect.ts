import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import { sqliteFileOf } from './database-url.js'
import type { Database } from './schema.js'

export type Dialect = 'sqlite' | 'postgres'

export interface Connection {
  db: Kysely<Database>
  dialect: Dialect
  /** The file of an embedded database; undefined for a server database. */
  sqliteFile?: string
  /** The connection pool of a server database; an embedded one has none. */
  pool?: PoolStats
}

export interface PoolStats { readonly totalCount: number, readonly idleCount: number, readonly waitingCount: number }

export function connect (databaseUrl: string): Connection {
  const sqliteFile = sqliteFileOf(databaseUrl)
  if (sqliteFile !== undefined) {
    mkdirSync(dirname(sqliteFile), { recursive: true })
    const database = new BetterSqlite3(sqliteFile)
    // WAL lets the CLI write while the server reads and writes; the timeout waits out its short
    // locks. better-sqlite3 waits synchronously, so the wait is kept short: a longer lock answers
    // 503 instead of stalling every request.
    database.pragma('journal_mode = WAL')
    database.pragma('busy_timeout = 1000')
    database.pragma('synchronous = NORMAL')
    return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: 'sqlite', sqliteFile }
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: 5000 })
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {})
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres', pool }
}
