import { isSqliteBusy } from './retry-while-busy.js'

/** A dependency (the database, Redis) cannot answer right now, not a bug: retryable, so 503, never 500. */
const UNAVAILABLE_CODES = new Set([
  // SQLite: a lock held past the wait (SQLITE_BUSY and its extended codes: isSqliteBusy).
  'SQLITE_LOCKED',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  // PostgreSQL stopping or out of connections; a deadlock or serialization abort, which a retry completes.
  '57P01', '57P02', '57P03', '53300', '40P01', '40001'
])

const PG_CONNECTION_FAILURES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed)/

/** node-postgres's own report of a server it could not reach or that stopped answering (no code). */
export function isPostgresConnectionFailure (error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' && PG_CONNECTION_FAILURES.test(message)
}

export function isDependencyUnavailable (error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code } = error as { code?: unknown }
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || isSqliteBusy(error))) {
    return true
  }
  return isPostgresConnectionFailure(error)
}

/** A dependency's failure in one line for a log's `reason`: its code and message, never its stack. */
export function unavailabilityReason (error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  return ['Dependency unavailable:', code, message].filter(Boolean).join(' ')
}
