import { setTimeout as pause } from 'node:timers/promises'

/** How long an operation waits for another process's lock (the CLI's `user seed`, a backup) before a 503. */
export const LOCK_WAIT_MS = 1000

const FIRST_PAUSE_MS = 2
const LONGEST_PAUSE_MS = 50

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT): another connection holds the lock. */
export function isSqliteBusy (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'))
}

/**
 * Runs `operation`, again while SQLite answers busy, pausing on a timer until `waitMs` have passed; then throws the
 * last busy error. SQLite's own wait stalls every request, so it is kept to a few ms (connect.ts) and the wait is here.
 * `operation` must be a whole unit of work (one autocommit statement or a whole transaction), never a statement inside
 * a transaction: one that met SQLITE_BUSY_SNAPSHOT can only succeed from its start.
 */
export async function retryWhileBusy<T> (operation: () => Promise<T>, waitMs = LOCK_WAIT_MS): Promise<T> {
  const giveUpAt = performance.now() + waitMs
  for (let pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(2 * pauseMs, LONGEST_PAUSE_MS)) {
    try {
      return await operation()
    } catch (error) {
      const remainingMs = giveUpAt - performance.now()
      if (!isSqliteBusy(error) || remainingMs <= 0) throw error
      await pause(Math.min(pauseMs, remainingMs))
    }
  }
}
