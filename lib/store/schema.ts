import type { Generated } from 'kysely'

/** The tables as Kysely sees them. Times are UNIX milliseconds; dates are `YYYY-MM-DD` text. */
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
  /** PostgreSQL returns BIGINT as a string, SQLite as a number. */
  last_seen_at: number | string | null
  created_at: number | string
}

/**
 * One row (id 1) of counters that triggers on users move in the same transaction as each change:
 * see migrations 0002_user_stats and 0003_user_counters.
 */
export interface UserCountersTable {
  id: number
  /** PostgreSQL returns BIGINT as a string, SQLite as a number. */
  user_count: number | string
  members_version: number | string
  credentials_version: number | string
}

export interface Database {
  users: UsersTable
  user_counters: UserCountersTable
}
