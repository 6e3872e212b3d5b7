import { randomBytes } from 'node:crypto'
import type { Selectable } from 'kysely'
import type { Connection } from './connect.js'
import { raiseTimes } from './raise-times.js'
import { retryWhileBusy } from './retry-while-busy.js'
import type { SessionEndCause, SessionsTable } from './schema.js'

declare const sessionIdBrand: unique symbol
/** A session's id: random, carried only inside its tokens (`sid`), never logged. */
export type SessionId = string & { readonly [sessionIdBrand]: true }

export type { SessionEndCause }
export type PrunedCause = SessionEndCause | 'expiry'
export const PRUNED_CAUSES: readonly PrunedCause[] = ['logout', 'expiry', 'password', 'removal', 'operator']

export interface SessionRecord {
  id: SessionId
  userId: number
  startedAt: number
  /** The start, the last refresh or authenticated request; written at most once a second. */
  lastUsedAt: number
  expiresAt: number
}

export type OpenSession = Pick<SessionRecord, 'userId' | 'expiresAt'>

function toRecord (row: Selectable<SessionsTable>): SessionRecord {
  return {
    id: row.id as SessionId,
    userId: Number(row.user_id),
    startedAt: Number(row.started_at),
    lastUsedAt: Number(row.last_used_at),
    expiresAt: Number(row.expires_at)
  }
}

/** 128 random bits: a session id cannot be guessed, nor counted. */
const newSessionId = (): SessionId => randomBytes(16).toString('base64url') as SessionId

/** One per login. A session ends once (`ended_at` never cleared), moving the counters' sessions version (0004). */
export class SessionStore {
  constructor (private readonly connection: Connection) {}

  private get db () { return this.connection.db }

  async start (userId: number, expiresAt: number, now = Date.now()): Promise<SessionRecord> {
    const row = { id: newSessionId(), user_id: userId, started_at: now, last_used_at: now, expires_at: expiresAt }
    await retryWhileBusy(async () => await this.db.insertInto('sessions').values(row).execute())
    return toRecord({ ...row, ended_at: null, end_cause: null })
  }

  /** The session if it has not ended (it may have expired: the caller compares `expiresAt`). */
  async findOpen (id: SessionId): Promise<OpenSession | undefined> {
    const row = await retryWhileBusy(async () => await this.db.selectFrom('sessions').select(['user_id', 'expires_at'])
      .where('id', '=', id).where('ended_at', 'is', null).executeTakeFirst())
    return row === undefined ? undefined : { userId: Number(row.user_id), expiresAt: Number(row.expires_at) }
  }

  /** Ends the session of `userId` with that id; false if there is none open. */
  async end (id: SessionId, userId: number, cause: SessionEndCause, now = Date.now()): Promise<boolean> {
    const result = await retryWhileBusy(async () => await this.db.updateTable('sessions')
      .set({ ended_at: now, end_cause: cause })
      .where('id', '=', id).where('user_id', '=', userId).where('ended_at', 'is', null).executeTakeFirst())
    return result.numUpdatedRows > 0n
  }

  /** Ends every session of the user that has neither ended nor expired; how many. */
  async endAllOf (userId: number, cause: SessionEndCause, now = Date.now()): Promise<number> {
    const result = await retryWhileBusy(async () => await this.db.updateTable('sessions')
      .set({ ended_at: now, end_cause: cause })
      .where('user_id', '=', userId).where('ended_at', 'is', null).where('expires_at', '>', now).executeTakeFirst())
    return Number(result.numUpdatedRows)
  }

  async listOpen (userId: number, now = Date.now()): Promise<SessionRecord[]> {
    const rows = await retryWhileBusy(async () => await this.db.selectFrom('sessions').selectAll()
      .where('user_id', '=', userId).where('ended_at', 'is', null).where('expires_at', '>', now)
      .orderBy('started_at').orderBy('id').execute())
    return rows.map(toRecord)
  }

  async recordUse (seen: ReadonlyMap<SessionId, number>): Promise<void> {
    await raiseTimes(
      this.db,
      this.connection.dialect,
      { table: 'sessions', column: 'last_used_at', keyType: 'text' },
      seen
    )
  }

  /** Deletes up to `limit` ended, then expired, sessions; their causes. PostgreSQL replicas skip each other's rows. */
  async pruneSome (now: number, limit: number): Promise<PrunedCause[]> {
    const ended = await this.deleteSome(limit)
    const causes: PrunedCause[] = ended.map((row) => row.end_cause ?? 'expiry')
    if (causes.length < limit) {
      const expired = await this.deleteSome(limit - causes.length, now)
      for (let n = 0; n < expired.length; n++) causes.push('expiry')
    }
    return causes
  }

  /** Deletes up to `limit` ended sessions, or with `expiredBy`, sessions that expired by then without ending. */
  private async deleteSome (limit: number, expiredBy?: number): Promise<Array<{ end_cause: SessionEndCause | null }>> {
    const sessions = this.db.selectFrom('sessions').select('id')
    const some = (expiredBy === undefined
      ? sessions.where('ended_at', 'is not', null)
      : sessions.where('ended_at', 'is', null).where('expires_at', '<=', expiredBy)).limit(limit)
    const chosen = this.connection.dialect === 'postgres' ? some.forUpdate().skipLocked() : some
    return await retryWhileBusy(async () => await this.db.deleteFrom('sessions').where('id', 'in', chosen)
      .returning('end_cause').execute())
  }
}
