import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import BetterSqlite3ForThisNode from './better-sqlite3.js'
import { LRUCache } from 'lru-cache'
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, SqliteDialect, type SqliteDatabase } from 'kysely'
import { sqliteFileOf } from './database-url.js'
import type { Database } from './schema.js'
import { isDependencyUnavailable } from './unavailable.js'

type Pg = typeof import('pg')
/** Loaded only for a server database: an embedded one does not carry the client (~15 MB). */
const loadPg = (): Pg => createRequire(import.meta.url)('pg') as Pg

export type Dialect = 'sqlite' | 'postgres'

/**
 * A failure the operator must act on, not a bug: the database cannot be used as it is (a file that
 * cannot be opened, a schema newer than this release). Said in one line, with what to do.
 */
export class DatabaseSetupError extends Error {
  override name = 'DatabaseSetupError'
}

/** better-sqlite3's refusal to open or create the file (a directory it may not write, say). */
function openSqlite (file: string): BetterSqlite3.Database {
  try {
    return new BetterSqlite3ForThisNode(file)
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_CANTOPEN') throw error
    throw new DatabaseSetupError(`SQLite cannot open ${file}: ${(error as Error).message} (can this user write to its directory?)`, { cause: error })
  }
}

export interface Connection {
  db: Kysely<Database>
  dialect: Dialect
  /** The file of an embedded database; undefined for a server database. */
  sqliteFile?: string
  /** The embedded database itself, for the few reads that must not pay for Kysely's queueing. */
  sqlite?: BetterSqlite3.Database
  /** The connection pool of a server database; an embedded one has none. */
  pool?: PoolStats
  /** A connection of its own to a server database, outside the pool, waiting at most `timeoutMs` to connect and for each query (the counters feed's). */
  openClient?: (timeoutMs: number) => import('pg').Client
}

export interface PoolStats { readonly totalCount: number, readonly idleCount: number, readonly waitingCount: number }

/** The longest a request waits for the server database, for a connection or for a query. */
const DATABASE_WAIT_MS = 3000

/**
 * The pool as Kysely takes it, but a client whose connection failed (reset, timed out) is
 * destroyed when released instead of going back to the pool, where the next request would find
 * it broken: after an outage the pool refills with fresh connections.
 */
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

/**
 * The database as Kysely takes it, but a statement is prepared once per SQL text, not for every
 * query (Kysely's SQLite driver prepares each anew, and preparing cost more than running the
 * small queries of a request). better-sqlite3 runs a statement synchronously, so one object
 * can serve every query of its text.
 */
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
    // WAL lets the CLI write while the server reads and writes. SQLite waits for a lock held by
    // another process synchronously, stalling every request: it waits a few ms, and the store
    // retries on a timer for longer (retry-while-busy.ts).
    database.pragma('journal_mode = WAL')
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
    database.pragma('synchronous = NORMAL')
    return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(database) }) }), dialect: 'sqlite', sqliteFile, sqlite: database }
  }
  const pg = loadPg()
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    // While the server cannot be reached or does not answer, a request waits at most this long
    // for a connection or for a query, then answers 503 (well inside the balancer's patience).
    connectionTimeoutMillis: DATABASE_WAIT_MS,
    query_timeout: DATABASE_WAIT_MS,
    keepAlive: true
  })
  // A client losing its server must never crash the process, idle (the pool's 'error') or
  // checked out (its own 'error', with no listener otherwise): the query in flight reports it.
  pool.on('error', () => {})
  pool.on('connect', (client) => { client.on('error', () => {}) })
  const openClient = (timeoutMs: number): import('pg').Client =>
    new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true, application_name: 'meridian counters feed' })
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: destroyingBrokenClients(pool) }) }), dialect: 'postgres', pool, openClient }
}
