import { isIPv4 } from 'node:net'
import { LRUCache } from 'lru-cache'

/** The IETF RateLimit draft's `qu` values. */
export type QuotaUnit = 'requests' | 'content-bytes'

export interface QuotaPolicy {
  /** Shown to clients in the RateLimit and RateLimit-Policy headers. */
  readonly name: string
  readonly quota: number
  readonly windowSeconds: number
  readonly unit: QuotaUnit
}

export const storeKeyOf = (policyName: string, client: string, window: number): string =>
  `${policyName}:${client}:${window}`

export interface Standing {
  /** Once this charge is made, when it fits. */
  remaining: number
  /** RateLimit's `t`, at most the window: seconds to the window's end if it fits, else Retry-After capped there. */
  resetSeconds: number
  retryAfterSeconds: number
}

interface WindowPair { previous: number, current: number }

/** This replica's own charges, and every replica's totals as the shared store last reported them. */
export class ClientUsage {
  window = 0
  readonly own: WindowPair = { previous: 0, current: 0 }
  /** For `sharedWindow - 1` and `sharedWindow`; meaningless unless sharedWindow is the current window. */
  readonly shared: WindowPair = { previous: 0, current: 0 }
  sharedWindow = -1
  /** False while `shared.previous` is only the last total known when the window turned. */
  previousFromStore = false
  /** Charged here in the current window, not yet sent. */
  unsent = 0
  /** Sent for `sendingWindow`, not yet answered. */
  sending = 0
  sendingWindow = -1

  constructor (readonly key: string) {}

  advance (window: number): void {
    const step = window - this.window
    if (step === 0) return
    this.own.previous = step === 1 ? this.own.current : 0
    this.own.current = 0
    if (step === 1 && this.sharedWindow === this.window) {
      // Until the store answers for the new window: the last total known, plus what was charged here since.
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

/** Sliding-window counters (Cloudflare's approximation): own counts, or the shared totals if fresh and larger. */
export class QuotaCounter {
  private readonly usage: LRUCache<string, ClientUsage>
  private readonly windowMs: number
  readonly touched: Set<ClientUsage> | undefined
  private readonly staleMs: number
  /** Last answered sync, or empty sync after one (ms). While the store answers, a paused client keeps its totals. */
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

  /** Charges nothing. When it fits, what would be left once charged; when not, how long until it fits. */
  standing (client: string, cost: number): Standing {
    const time = this.now()
    const usage = this.usageOf(client)
    this.touched?.add(usage)
    const counts = this.countsOf(usage, time)
    const used = this.estimate(counts, time)
    const windowStart = usage.window * this.windowMs
    if (used + cost > this.policy.quota) {
      const retryAfterSeconds = Math.max(1, Math.ceil((this.timeOfRoom(counts, cost, windowStart) - time) / 1000))
      const resetSeconds = Math.min(retryAfterSeconds, this.policy.windowSeconds)
      return { remaining: Math.max(0, Math.floor(this.policy.quota - used)), resetSeconds, retryAfterSeconds }
    }
    const resetSeconds = counts.current + cost > 0 || counts.previous > 0
      ? Math.ceil((windowStart + this.windowMs - time) / 1000)
      : 0
    return { remaining: Math.floor(this.policy.quota - used - cost), resetSeconds, retryAfterSeconds: 0 }
  }

  /** `cost` never exceeds the quota (the configuration checks), so it fits at the latest once both windows pass. */
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

  charge (client: string, cost: number): void {
    const usage = this.usageOf(client)
    usage.own.current += cost
    usage.unsent += cost
    this.touched?.add(usage)
  }

  storeKey (usage: ClientUsage, window: number): string {
    return storeKeyOf(this.policy.name, usage.key, window)
  }

  get windowMilliseconds (): number { return this.windowMs }
}

/** An IPv4 address, or an IPv6 address's /64 (one host's usual share). */
export function clientKeyOf (address: string): string {
  if (isIPv4(address)) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return mapped[1] as string
  const [head = '', tail] = address.toLowerCase().split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined
    ? headGroups
    : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
