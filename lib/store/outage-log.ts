import { unavailabilityReason } from './unavailable.js'

export interface OutageLogger {
  warn: (fields: object, message: string) => void
  info: (fields: object, message: string) => void
}

/** A store is away: its first failure at once, then one line per interval with the failures since, and on return. */
export class StoreOutageLog {
  private failuresSinceLastLine = 0
  /** When the outage's first and latest lines were logged; undefined while the store answers. */
  private outage: { startedAt: number, lastLineAt: number } | undefined

  constructor (
    private readonly log: OutageLogger,
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
    private readonly store = 'login throttle store'
  ) {}

  failed (error: unknown): void {
    this.failuresSinceLastLine++
    const time = this.now()
    if (this.outage !== undefined && time - this.outage.lastLineAt < this.intervalMs) return
    this.outage = { startedAt: this.outage?.startedAt ?? time, lastLineAt: time }
    // The failure's code and message, no stack: a line an operator reads, the same at every reconnection.
    this.log.warn(
      { reason: unavailabilityReason(error), failuresSinceLastLine: this.failuresSinceLastLine },
      `${this.store} unavailable`
    )
    this.failuresSinceLastLine = 0
  }

  answered (): void {
    if (this.outage === undefined) return
    this.log.info(
      { failuresSinceLastLine: this.failuresSinceLastLine, unavailableForMs: this.now() - this.outage.startedAt },
      `${this.store} available again`
    )
    this.outage = undefined
    this.failuresSinceLastLine = 0
  }
}
