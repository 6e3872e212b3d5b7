import { setTimeout as pause } from 'node:timers/promises'
import { PRUNED_CAUSES, type PrunedCause, type SessionStore } from '../store/session-store.js'

/** Larger ones stall the event loop on checkpoints (docs/performance.md, "The figures behind the code's constants"). */
export const PRUNE_BATCH = 100

/** Deletes ended and expired sessions in batches, each counted by cause once, by whichever replica deleted it. */
export class SessionPruner {
  /** Sessions this process has pruned since it started, by cause. */
  readonly pruned = Object.fromEntries(PRUNED_CAUSES.map((cause) => [cause, 0])) as Record<PrunedCause, number>
  private running: Promise<number> | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor (
    private readonly store: SessionStore,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void
  ) {}

  start (): void {
    if (this.closed || this.timer !== undefined) return
    this.timer = setInterval(() => { void this.prune().catch(this.onError) }, this.intervalMs).unref()
    void this.prune().catch(this.onError)
  }

  /** Deletes every session ended or expired by `now`; how many. A call during a run joins it. */
  async prune (now = Date.now()): Promise<number> {
    this.running ??= this.pruneAll(now).finally(() => { this.running = undefined })
    return await this.running
  }

  private async pruneAll (now: number): Promise<number> {
    let total = 0
    while (!this.closed) {
      const started = performance.now()
      const causes = await this.store.pruneSome(now, PRUNE_BATCH)
      for (const cause of causes) this.pruned[cause]++
      total += causes.length
      if (causes.length < PRUNE_BATCH) break
      // As long again before the next batch: a backlog takes at most half the event loop and the write lock.
      await pause(performance.now() - started)
    }
    return total
  }

  async close (): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    await this.running?.catch(() => {})
  }
}
