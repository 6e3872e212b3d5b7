import { setImmediate as nextTurn } from 'node:timers/promises'
import { sql, type Selectable } from 'kysely'
import { connect, type Connection, type Dialect, type PoolStats } from './connect.js'
import { migrateToLatest, ping } from './migrations.js'
import { raiseTimes } from './raise-times.js'
import { retryWhileBusy } from './retry-while-busy.js'
import { SessionStore } from './session-store.js'
import type { Client } from 'pg'
import {
  CountersFeed,
  type CountersFeedEvents,
  type CountersFeedTiming,
  FEED_WAIT_MS,
  type UserCounters
} from './counters-feed.js'
import type BetterSqlite3 from 'better-sqlite3'
import type { UsersTable, UserCountersTable } from './schema.js'

export type { UserCounters }

export interface NewUser {
  username: string
  passwordHash: string
  name: string
  birthdate: string
  gender: string
  shortDesc: string
}

export interface UserRecord extends NewUser {
  id: number
  tokenVersion: number
  /** UNIX ms of the last login, refresh or authenticated request; null if never. */
  lastSeenAt: number | null
  createdAt: number
}

/** No username, password hash or token version, so a page (kept in replicas' memory) cannot carry them. */
export type DirectoryEntry = Pick<UserRecord, 'id' | 'name' | 'birthdate' | 'gender' | 'shortDesc' | 'lastSeenAt'>

export interface DirectoryPage {
  userCount: number
  membersVersion: number
  users: DirectoryEntry[]
}

export interface PageAnchors {
  /** undefined when the members changed while the ids were read: they hold for no version. */
  membersVersion: number | undefined
  ids: number[]
}

export class UsernameTakenError extends Error {
  override name = 'UsernameTakenError'
  constructor (readonly username: string) {
    super(`username ${username} is taken`)
  }
}

type CountersRow = Pick<
  Selectable<UserCountersTable>,
  'user_count' | 'members_version' | 'credentials_version' | 'sessions_version'
>

const directoryColumns = ['id', 'name', 'birthdate', 'gender', 'short_desc', 'last_seen_at'] as const
type DirectoryRow = Pick<Selectable<UsersTable>, typeof directoryColumns[number]>

function toEntry (row: DirectoryRow): DirectoryEntry {
  return {
    id: Number(row.id),
    name: row.name,
    birthdate: row.birthdate,
    gender: row.gender,
    shortDesc: row.short_desc,
    lastSeenAt: row.last_seen_at === null ? null : Number(row.last_seen_at)
  }
}

function toCounters (row: CountersRow | undefined): UserCounters {
  if (row === undefined) throw new Error('user_counters has no row: run the migrations')
  return {
    userCount: Number(row.user_count),
    membersVersion: Number(row.members_version),
    credentialsVersion: Number(row.credentials_version),
    sessionsVersion: Number(row.sessions_version)
  }
}

function toRecord (row: Selectable<UsersTable>): UserRecord {
  return {
    ...toEntry(row),
    username: row.username,
    passwordHash: row.password_hash,
    tokenVersion: Number(row.token_version),
    createdAt: Number(row.created_at)
  }
}

const toRow = (user: NewUser, now: number) => ({
  username: user.username,
  password_hash: user.passwordHash,
  name: user.name,
  birthdate: user.birthdate,
  gender: user.gender,
  short_desc: user.shortDesc,
  created_at: now
})

/** Anchor steps per loop turn: SQLite steps run synchronously, and unyielded would hold the event loop. */
export const ANCHOR_STEPS_PER_TURN = 16

function isUniqueViolation (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}

/** One autocommit statement per operation, retried whole on a lock; a transaction added here must be too. */
export class Database {
  /** Every authenticated request reads the counters: the query is built once. */
  private readonly countersQuery
  private countersStatement: BetterSqlite3.Statement<unknown[], CountersRow> | undefined
  readonly sessions: SessionStore

  private constructor (private readonly connection: Connection) {
    this.countersQuery = this.db.selectFrom('user_counters')
      .select(['user_count', 'members_version', 'credentials_version', 'sessions_version'])
      .where('id', '=', 1).compile()
    this.sessions = new SessionStore(connection)
  }

  static open (databaseUrl: string): Database {
    return new Database(connect(databaseUrl))
  }

  get dialect (): Dialect { return this.connection.dialect }
  get sqliteFile (): string | undefined { return this.connection.sqliteFile }
  get pool (): PoolStats | undefined { return this.connection.pool }

  private get db () { return this.connection.db }

  async migrate (): Promise<string[]> {
    // Retried whole: the migrator re-reads what was applied. Hazard: 0001 runs outside a transaction on SQLite, so a
    // lock between its table and its record leaves the table unrecorded.
    return await retryWhileBusy(async () => await migrateToLatest(this.db, this.dialect))
  }

  async ping (): Promise<void> {
    await ping(this.db)
  }

  async close (): Promise<void> {
    await this.db.destroy()
  }

  async findByUsername (username: string): Promise<UserRecord | undefined> {
    const row = await retryWhileBusy(async () => await this.db.selectFrom('users').selectAll()
      .where('username', '=', username).executeTakeFirst())
    return row === undefined ? undefined : toRecord(row)
  }

  async findById (id: number): Promise<UserRecord | undefined> {
    const row = await retryWhileBusy(async () => await this.db.selectFrom('users').selectAll()
      .where('id', '=', id).executeTakeFirst())
    return row === undefined ? undefined : toRecord(row)
  }

  async counters (): Promise<UserCounters> {
    return toCounters(await retryWhileBusy(async () => await this.readCounters()))
  }

  /** Counters pushed by a server database (counters-feed.ts); undefined on SQLite. The caller starts and closes it. */
  countersFeed (events: Partial<CountersFeedEvents> = {}, timing?: CountersFeedTiming): CountersFeed | undefined {
    const { openClient } = this.connection
    if (openClient === undefined) return undefined
    const { sql: text, parameters } = this.countersQuery
    const read = async (client: Client): Promise<UserCounters> =>
      toCounters((await client.query<CountersRow>(text, [...parameters])).rows[0])
    return new CountersFeed(() => openClient(FEED_WAIT_MS), read, events, timing)
  }

  private async readCounters (): Promise<CountersRow | undefined> {
    const { sqlite } = this.connection
    // Embedded, Kysely's queue around the read costs several times the read.
    if (sqlite !== undefined) {
      this.countersStatement ??= sqlite.prepare(this.countersQuery.sql)
      return this.countersStatement.get(...this.countersQuery.parameters)
    }
    return (await this.db.executeQuery(this.countersQuery)).rows[0]
  }

  async count (): Promise<number> {
    return (await this.counters()).userCount
  }

  async list (offset: number, limit: number): Promise<DirectoryEntry[]> {
    return (await this.pageFrom(0, offset, limit)).users
  }

  /** Users in `id` order from `firstId` with the count and members version, in one statement: one snapshot. */
  async pageFrom (firstId: number, skip: number, limit: number): Promise<DirectoryPage> {
    const page = this.db.selectFrom('users').select(directoryColumns)
      .where('id', '>=', firstId).orderBy('id').limit(limit).offset(skip).as('page')
    const rows = await retryWhileBusy(async () => await this.db.selectFrom('user_counters')
      .leftJoin(page, (join) => join.onTrue())
      .select([
        'user_counters.user_count',
        'user_counters.members_version',
        ...directoryColumns.map((column) => `page.${column}` as const)
      ])
      .where('user_counters.id', '=', 1).orderBy('page.id').execute())
    const first = rows[0]
    if (first === undefined) throw new Error('user_counters has no row: run the migrations')
    return {
      userCount: Number(first.user_count),
      membersVersion: Number(first.members_version),
      users: rows.flatMap((row) => row.id === null ? [] : [toEntry(row as DirectoryRow)])
    }
  }

  /** No transaction (on SQLite it would queue every query): the ids hold only if the members version did not move. */
  async idsEvery (spacing: number): Promise<PageAnchors> {
    const before = (await this.counters()).membersVersion
    const ids: number[] = []
    let row = await retryWhileBusy(async () => await this.db.selectFrom('users').select('id')
      .orderBy('id').limit(1).executeTakeFirst())
    while (row !== undefined) {
      const id = Number(row.id)
      ids.push(id)
      if (ids.length % ANCHOR_STEPS_PER_TURN === 0) await nextTurn()
      row = await retryWhileBusy(async () => await this.db.selectFrom('users').select('id')
        .where('id', '>', id).orderBy('id').limit(1).offset(spacing - 1).executeTakeFirst())
    }
    const after = (await this.counters()).membersVersion
    return { membersVersion: before === after ? after : undefined, ids }
  }

  async add (user: NewUser, now = Date.now()): Promise<UserRecord> {
    try {
      const row = await retryWhileBusy(async () => await this.db.insertInto('users').values(toRow(user, now))
        .returningAll().executeTakeFirstOrThrow())
      return toRecord(row)
    } catch (error) {
      if (isUniqueViolation(error)) throw new UsernameTakenError(user.username)
      throw error
    }
  }

  async addMany (users: readonly NewUser[], now = Date.now()): Promise<void> {
    if (users.length === 0) return
    const rows = users.map((user) => toRow(user, now))
    await retryWhileBusy(async () => await this.db.insertInto('users').values(rows).execute())
  }

  /** A new password: every token issued before it stops working, and every session of the user ends (by trigger). */
  async changePassword (username: string, passwordHash: string): Promise<boolean> {
    const result = await retryWhileBusy(async () => await this.db.updateTable('users')
      .set({ password_hash: passwordHash, token_version: sql`token_version + 1` })
      .where('username', '=', username).executeTakeFirst())
    return result.numUpdatedRows > 0n
  }

  /** The same password under stronger hash parameters: tokens stay valid. */
  async replacePasswordHash (id: number, oldHash: string, newHash: string): Promise<void> {
    await retryWhileBusy(async () => await this.db.updateTable('users').set({ password_hash: newHash })
      .where('id', '=', id).where('password_hash', '=', oldHash).execute())
  }

  async remove (username: string): Promise<boolean> {
    const result = await retryWhileBusy(async () => await this.db.deleteFrom('users')
      .where('username', '=', username).executeTakeFirst())
    return result.numDeletedRows > 0n
  }

  async recordActivity (seen: ReadonlyMap<number, number>): Promise<void> {
    await raiseTimes(this.db, this.dialect, { table: 'users', column: 'last_seen_at', keyType: 'bigint' }, seen)
  }
}
