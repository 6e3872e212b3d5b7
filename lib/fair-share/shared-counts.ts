import type { Redis } from 'ioredis'
import type { ClientUsage, QuotaCounter } from './quotas.js'

export interface SharedCountsOptions {
  /** How often the charges of this replica go to Redis, and every replica's totals come back. */
  intervalMs: number
  /** Prefix of every key this writes. */
  prefix: string
  /** A sync failed (Redis away, stalled past its command timeout, or refusing). */
  onFailure: (error: unknown) => void
  /** A sync succeeded. */
  onAnswer: () => void
}

interface Sent { counter: QuotaCounter, usage: ClientUsage, window: number, readsPrevious: boolean }

/**
 * Makes one client's share one across replicas without a Redis round trip on any request: every
 * `intervalMs`, one pipeline adds what this replica charged each active client since the last
 * sync to that client's count of the window (INCRBY, which answers with every replica's total)
 * and reads the previous window's total the first time a window is synced. Decisions read the
 * totals of the last answer plus what was charged here since (QuotaCounter); when no sync has been
 * answered for a while, they fall back to this replica's own counts. One sync at a time: a stalled
 * Redis holds back the next sync, never a request.
 */
export class SharedCounts {
  private syncing: Promise<void> | undefined
  private lastSyncFailed = false
  private readonly timer: NodeJS.Timeout

  constructor (
    private readonly redis: Redis,
    private readonly counters: readonly QuotaCounter[],
    private readonly options: SharedCountsOptions,
    private readonly now: () => number = Date.now
  ) {
    this.timer = setInterval(() => { void this.sync() }, options.intervalMs).unref()
  }

  /** Sends the charges made since the last sync and takes in the totals; resolves either way. */
  async sync (): Promise<void> {
    if (this.syncing !== undefined) return
    this.syncing = this.exchange().finally(() => { this.syncing = undefined })
    await this.syncing
  }

  private async exchange (): Promise<void> {
    const pipeline = this.redis.pipeline()
    const sent: Sent[] = []
    for (const counter of this.counters) {
      const windowMs = counter.windowMilliseconds
      for (const usage of counter.touched ?? []) {
        const window = usage.window
        // A client asked about but not charged since its totals of this window came needs nothing:
        // its totals stand while the store answers others' syncs.
        if (usage.unsent === 0 && usage.sharedWindow === window && usage.previousFromStore) continue
        usage.sending = usage.unsent
        usage.sendingWindow = window
        usage.unsent = 0
        const key = this.options.prefix + counter.storeKey(usage, window)
        // A window's count matters until the next window has passed too.
        pipeline.incrby(key, usage.sending).pexpire(key, 2 * windowMs + 1000)
        const readsPrevious = usage.sharedWindow !== window || !usage.previousFromStore
        if (readsPrevious) pipeline.get(this.options.prefix + counter.storeKey(usage, window - 1))
        sent.push({ counter, usage, window, readsPrevious })
      }
      counter.touched?.clear()
    }
    // Nothing to send: the store's last answer still stands, unless its last sync failed.
    if (sent.length === 0) {
      if (!this.lastSyncFailed) this.answered()
      return
    }
    try {
      const results = await pipeline.exec()
      const failure = results?.find(([error]) => error !== null)?.[0] ??
        (results === null ? new Error('pipeline discarded') : undefined)
      if (failure !== undefined) throw failure
      this.takeTotals(sent, (results ?? []).map(([, value]) => value))
      this.lastSyncFailed = false
      this.answered()
      this.options.onAnswer()
    } catch (error) {
      for (const { usage } of sent) usage.sending = 0
      this.lastSyncFailed = true
      this.options.onFailure(error)
    }
  }

  private answered (): void {
    const answeredAt = this.now()
    for (const counter of this.counters) counter.storeAnsweredAt = answeredAt
  }

  private takeTotals (sent: readonly Sent[], values: unknown[]): void {
    let next = 0
    for (const { usage, window, readsPrevious } of sent) {
      const total = Number(values[next])
      next += 2
      const previous = readsPrevious ? Number(values[next++] ?? 0) : undefined
      usage.sending = 0
      if (usage.window === window) {
        usage.shared.current = total
        if (previous !== undefined) {
          usage.shared.previous = previous
          usage.previousFromStore = true
        }
        usage.sharedWindow = window
      } else if (usage.window === window + 1 && usage.sharedWindow === usage.window) {
        // The window turned while the answer was on its way: it is the previous window's total.
        usage.shared.previous = total
      }
    }
  }

  /** Stops syncing, once the sync under way (if any) has settled. */
  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.syncing
  }
}
