import type { Redis } from 'ioredis'
import type { ClientUsage, QuotaCounter } from './quotas.js'

export interface SharedCountsOptions {
  /** How often the charges of this replica go to Redis, and every replica's totals come back. */
  intervalMs: number
  prefix: string
  /** A sync failed (Redis away, stalled past its command timeout, or refusing). */
  onFailure: (error: unknown) => void
  onAnswer: () => void
}

interface Sent { counter: QuotaCounter, usage: ClientUsage, window: number, readsPrevious: boolean }

/** A share across replicas without a Redis call per request: a pipeline per interval; a stall holds back syncs only. */
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
        // Not charged since its totals of this window came: they stand while the store answers others' syncs.
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

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.syncing
  }
}
