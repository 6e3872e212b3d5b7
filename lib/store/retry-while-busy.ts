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

/** Retries SQLITE_BUSY on a timer until `waitMs`; `operation` is a whole unit of work, never a statement of one. */
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
