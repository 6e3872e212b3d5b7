import type { Generated } from 'kysely'

/** The tables as Kysely sees them. Times are UNIX ms, dates `YYYY-MM-DD`; PostgreSQL returns BIGINT as a string. */
export interface UsersTable {
  id: Generated<number>
  username: string
  password_hash: string
  name: string
  birthdate: string
  gender: string
  short_desc: string
  /** Raised by a password change; tokens carry the version they were issued under. */
  token_version: Generated<number>
  last_seen_at: number | string | null
  created_at: number | string
}

/** One row (id 1) of counters that triggers on users move with each change (migrations 0002, 0003). */
export interface UserCountersTable {
  id: number
  user_count: number | string
  members_version: number | string
  credentials_version: number | string
  /** Moves with every session that ends (0004_sessions): an open session may have stopped holding. */
  sessions_version: Generated<number | string>
}

/** Why a session ended; a session pruned while open had expired. */
export type SessionEndCause = 'logout' | 'password' | 'removal' | 'operator'

/** One row per login (0004); no foreign key: a user's removal ends sessions by trigger, so the pruner counts them. */
export interface SessionsTable {
  id: string
  user_id: number | string
  started_at: number | string
  /** Written in batches, at most once a second per session (plugins/app/activity.ts). */
  last_used_at: number | string
  /** The refresh token's `exp`, in ms. */
  expires_at: number | string
  ended_at: number | string | null
  end_cause: SessionEndCause | null
}

export interface Database {
  users: UsersTable
  user_counters: UserCountersTable
  sessions: SessionsTable
}
