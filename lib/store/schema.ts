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

export interface Database {
  users: UsersTable
}
