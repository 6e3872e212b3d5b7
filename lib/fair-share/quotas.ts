import { isIPv4 } from 'node:net'
import { LRUCache } from 'lru-cache'

/** What a quota counts, in the words of the IETF RateLimit draft's `qu` parameter. */
export type QuotaUnit = 'requests' | 'content-bytes'

/** A quota over a sliding window, the same for every client. */
export interface QuotaPolicy {
  /** The name clients see in the RateLimit and RateLimit-Policy headers. */
  readonly name: string
  readonly quota: number
  readonly windowSeconds: number
  readonly unit: QuotaUnit
}

/** Where a client stands in one policy at one moment. */
export interface Standing {
  /** Quota units the client may still use (once this charge is made, when it fits). */
  remaining: number
  /** Seconds until the client's whole quota is back if it used no more; when refused, the Retry-After. */
  resetSeconds: number
  /** Seconds until a charge of the asked cost fits; 0 when it fits now. */
  retryAfterSeconds: number
}

/** The previous and current window's counts of one client. */
interface WindowPair { previous: number, current: number }

/**
 * One client's use of one policy: this replica's own charges, and the totals of every replica
 * as the shared store last reported them, each for the previous and the current window.
 */
export class ClientUsage {
  /** Index of the current window (milliseconds since the epoch ÷ the window). */
  window = 0
  readonly own: WindowPair = { previous: 0, current: 0 }
  /** The shared totals, for `sharedWindow - 1` and `sharedWindow`; meaningful only when sharedWindow is the current window. */
  readonly shared: WindowPair = { previous: 0, current: 0 }
  sharedWindow = -1
  /** Whether `shared.previous` is the store's total, rather than the last total known when the window turned. */
  previousFromStore = false
  /** Charged into the current window here and not yet sent to the shared store. */
  unsent = 0
  /** Sent to the shared store for `sendingWindow`, not yet answered. */
  sending = 0
  sendingWindow = -1

  constructor (readonly key: string) {}

  /** Moves the counts on to window `window`: the current becomes the previous, or both go when a whole window passed. */
  advance (window: number): void {
    const step = window - this.window
    if (step === 0) return
    this.own.previous = step === 1 ? this.own.current : 0
    this.own.current = 0
    if (step === 1 && this.sharedWindow === this.window) {
      // Until the store answers for the new window, the old one's total is the last one known
      // plus what this replica charged since.
      this.shared.previous = this.shared.current + this.unsent + (this.sendingWindow === this.window ? this.sending : 0)
      this.shared.current = 0
      this.sharedWindow = window
      this.previousFromStore = false
    } else {
      this.sharedWindow = -1
    }
    // Charges not sent in time stay in the own counts only: at most one sync interval's worth.
    this.unsent = 0
    this.window = window
  }
}

/**
 * Sliding-window counters per client and policy: the previous window's count weighted by the
 * part of it still inside the sliding window, plus the current window's (the approximation
 * Cloudflare and nginx-style limiters use, exact at the window's edges). Counts are this
 * replica's own, or, when a shared store answered within `staleMs`, every replica's totals
 * (`SharedCounts` keeps those), whichever is larger.
 */
export class QuotaCounter {
  private readonly usage: LRUCache<string, ClientUsage>
  private readonly windowMs: number
  /** With a shared store: the usages charged or asked about since it last heard of them. */
  readonly touched: Set<ClientUsage> | undefined
  /** How long the shared totals count after the store's last answer. */
  private readonly staleMs: number
  /**
   * When the shared store last answered a sync, or was last found with nothing to sync after one
   * it answered (ms). Its totals count while it answers, whenever a client was last synced: one
   * that paused keeps its last totals, plus what was charged here since.
   */
  storeAnsweredAt = -Infinity

  constructor (
    readonly policy: QuotaPolicy,
    options: { maxClients: number, staleMs: number, shared: boolean },
    private readonly now: () => number = Date.now
  ) {
    this.windowMs = policy.windowSeconds * 1000
    this.usage = new LRUCache({ max: options.maxClients })
    this.staleMs = options.staleMs
    this.touched = options.shared ? new Set() : undefined
  }

  private usageOf (client: string): ClientUsage {
    let usage = this.usage.get(client)
    if (usage === undefined) {
      usage = new ClientUsage(client)
      this.usage.set(client, usage)
    }
    usage.advance(Math.floor(this.now() / this.windowMs))
    return usage
  }

  /** The counts a decision reads: the shared totals while the store answers and they are larger, else this replica's own. */
  private countsOf (usage: ClientUsage, time: number): WindowPair {
    const own = usage.own
    if (usage.sharedWindow !== usage.window || time - this.storeAnsweredAt > this.staleMs) return own
    const inFlight = usage.sendingWindow === usage.window ? usage.sending : 0
    const shared = { previous: usage.shared.previous, current: usage.shared.current + usage.unsent + inFlight }
    return this.estimate(shared, time) > this.estimate(own, time) ? shared : own
  }

  private estimate (counts: WindowPair, time: number): number {
    const elapsed = (time % this.windowMs) / this.windowMs
    return counts.previous * (1 - elapsed) + counts.current
  }

  /**
   * Where `client` stands for a charge of `cost`, without charging it: when it fits, what would be
   * left once charged; when not, how long until it fits.
   */
  standing (client: string, cost: number): Standing {
    const time = this.now()
    const usage = this.usageOf(client)
    this.touched?.add(usage)
    const counts = this.countsOf(usage, time)
    const used = this.estimate(counts, time)
    const windowStart = usage.window * this.windowMs
    if (used + cost > this.policy.quota) {
      const retryAfterSeconds = Math.max(1, Math.ceil((this.timeOfRoom(counts, cost, windowStart) - time) / 1000))
      return { remaining: Math.max(0, Math.floor(this.policy.quota - used)), resetSeconds: retryAfterSeconds, retryAfterSeconds }
    }
    const windowEnd = windowStart + this.windowMs
    const resetAt = counts.current + cost > 0 ? windowEnd + this.windowMs : counts.previous > 0 ? windowEnd : time
    return { remaining: Math.floor(this.policy.quota - used - cost), resetSeconds: Math.ceil((resetAt - time) / 1000), retryAfterSeconds: 0 }
  }

  /**
   * When a charge of `cost` fits: later in this window, as the previous window's weight falls,
   * or in the next, as this window's does. `cost` is never above the quota (the configuration
   * sees to that), so it always fits at the latest when both windows have passed.
   */
  private timeOfRoom (counts: WindowPair, cost: number, windowStart: number): number {
    const quota = this.policy.quota
    const roomNow = quota - counts.current - cost
    if (roomNow >= 0 && counts.previous > 0) {
      const elapsedNeeded = 1 - roomNow / counts.previous
      if (elapsedNeeded <= 1) return windowStart + elapsedNeeded * this.windowMs
    }
    const elapsedNeeded = counts.current > 0 ? Math.max(0, 1 - (quota - cost) / counts.current) : 0
    return windowStart + this.windowMs + elapsedNeeded * this.windowMs
  }

  /** Charges `cost` to `client` in the current window. */
  charge (client: string, cost: number): void {
    const usage = this.usageOf(client)
    usage.own.current += cost
    usage.unsent += cost
    this.touched?.add(usage)
  }

  /** The shared store's key for one client's count in one window. */
  storeKey (usage: ClientUsage, window: number): string {
    return `${this.policy.name}:${usage.key}:${window}`
  }

  get windowMilliseconds (): number { return this.windowMs }
}

/** The client a request is counted for: an IPv4 address, or the /64 network of an IPv6 one (one host's usual share). */
export function clientKeyOf (address: string): string {
  if (isIPv4(address)) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return mapped[1] as string
  const [head = '', tail] = address.toLowerCase().split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
