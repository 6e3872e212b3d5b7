import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import BetterSqlite3ForThisNode from './better-sqlite3.js'
import { LRUCache } from 'lru-cache'
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  type SqliteDatabase
} from 'kysely'
import { sqliteFileOf } from './database-url.js'
import type { Database } from './schema.js'
import { isDependencyUnavailable } from './unavailable.js'

type Pg = typeof import('pg')
/** Loaded only for a server database: an embedded one does not carry the client. */
const loadPg = (): Pg => createRequire(import.meta.url)('pg') as Pg

export type Dialect = 'sqlite' | 'postgres'

/** A failure the operator must fix, not a bug (unopenable file, newer schema): one line saying what to do. */
export class DatabaseSetupError extends Error {
  override name = 'DatabaseSetupError'
}

function openSqlite (file: string): BetterSqlite3.Database {
  try {
    return new BetterSqlite3ForThisNode(file)
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_CANTOPEN') throw error
    throw new DatabaseSetupError(
      `SQLite cannot open ${file}: ${(error as Error).message} (can this user write to its directory?)`,
      { cause: error }
    )
  }
}

export interface Connection {
  db: Kysely<Database>
  dialect: Dialect
  sqliteFile?: string
  /** The embedded database itself, for the few reads that must not pay for Kysely's queueing. */
  sqlite?: BetterSqlite3.Database
  pool?: PoolStats
  /** The counters feed's connection, outside the pool; `timeoutMs` bounds connecting and each query. */
  openClient?: (timeoutMs: number) => import('pg').Client
}

export interface PoolStats { readonly totalCount: number, readonly idleCount: number, readonly waitingCount: number }

/** The longest a request waits for the server database, for a connection or for a query. */
const DATABASE_WAIT_MS = 3000

/** Destroys a client whose connection failed rather than pool it, so after an outage the pool refills fresh. */
function destroyingBrokenClients (pool: import('pg').Pool): PostgresPool {
  return {
    async connect () {
      const client = await pool.connect()
      let broken = false
      return {
        query: ((...args: Parameters<import('pg').PoolClient['query']>) => {
          const result = client.query(...args) as unknown
          if (result instanceof Promise) {
            result.catch((error: unknown) => { if (isDependencyUnavailable(error)) broken = true })
          }
          return result
        }) as PostgresPoolClient['query'],
        release: () => { client.release(broken) }
      }
    },
    end: async () => { await pool.end() }
  }
}

/** SQLite's own wait for a lock, which holds the event loop: short locks pass without a retry. */
const SQLITE_BUSY_TIMEOUT_MS = 5

/** Distinct statements kept prepared; the hot ones are a handful. */
const PREPARED_STATEMENTS = 100

/** Prepares once per SQL text (Kysely prepares each query anew); synchronous better-sqlite3 lets one serve them all. */
function reusingStatements (database: BetterSqlite3.Database): SqliteDatabase {
  // A statement never goes stale (SQLite prepares it again itself after a schema change): no TTL.
  const prepared = new LRUCache<string, BetterSqlite3.Statement>({ max: PREPARED_STATEMENTS })
  return {
    close: () => { database.close() },
    prepare (text: string) {
      let statement = prepared.get(text)
      if (statement === undefined) {
        statement = database.prepare(text)
        prepared.set(text, statement)
      }
      return statement
    }
  }
}

export function connect (databaseUrl: string): Connection {
  const sqliteFile = sqliteFileOf(databaseUrl)
  if (sqliteFile !== undefined) {
    mkdirSync(dirname(sqliteFile), { recursive: true })
    const database = openSqlite(sqliteFile)
    // WAL lets the CLI write meanwhile; SQLite's lock wait stalls the event loop, so it is brief (retry-while-busy.ts).
    database.pragma('journal_mode = WAL')
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
    database.pragma('synchronous = NORMAL')
    return {
      db: new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(database) }) }),
      dialect: 'sqlite',
      sqliteFile,
      sqlite: database
    }
  }
  const pg = loadPg()
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    // Then 503: well inside the balancer's patience.
    connectionTimeoutMillis: DATABASE_WAIT_MS,
    query_timeout: DATABASE_WAIT_MS,
    keepAlive: true
  })
  // A client losing its server, idle or checked out, must not crash the process: the query in flight reports it.
  pool.on('error', () => {})
  pool.on('connect', (client) => { client.on('error', () => {}) })
  const openClient = (timeoutMs: number): import('pg').Client =>
    new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      keepAlive: true,
      application_name: 'meridian counters feed'
    })
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: destroyingBrokenClients(pool) }) }),
    dialect: 'postgres',
    pool,
    openClient
  }
}
