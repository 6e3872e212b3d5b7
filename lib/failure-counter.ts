import type { Redis } from 'ioredis'

/** Counts failures per key inside a fixed window that starts with the first failure. */
export interface FailureCounter {
  /** Failures so far in the key's window, and the seconds until that window ends. */
  get: (key: string) => Promise<{ failures: number, retryAfterSeconds: number }>
  record: (key: string) => Promise<void>
  reset: (key: string) => Promise<void>
  close: () => Promise<void>
}

export class MemoryFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { failures: number, endsAt: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly windowMs: number, private readonly now: () => number = Date.now) {
    // Keeps memory bounded under a spray of usernames: windows that ended are dropped.
    this.sweeper = setInterval(() => {
      const time = this.now()
      for (const [key, window] of this.windows) if (window.endsAt <= time) this.windows.delete(key)
    }, Math.min(windowMs, 60_000))
    this.sweeper.unref()
  }

  async get (key: string) {
    const window = this.windows.get(key)
    const time = this.now()
    if (window === undefined || window.endsAt <= time) return { failures: 0, retryAfterSeconds: 0 }
    return { failures: window.failures, retryAfterSeconds: Math.ceil((window.endsAt - time) / 1000) }
  }

  async record (key: string) {
    const time = this.now()
    const window = this.windows.get(key)
    if (window === undefined || window.endsAt <= time) {
      this.windows.set(key, { failures: 1, endsAt: time + this.windowMs })
    } else {
      window.failures++
    }
  }

  async reset (key: string) {
    this.windows.delete(key)
  }

  async close () {
    clearInterval(this.sweeper)
  }
}

/** The same counter in Redis, so every replica sees every failure. */
export class RedisFailureCounter implements FailureCounter {
  constructor (private readonly redis: Redis, private readonly windowMs: number, private readonly prefix = 'meridian:login-failures:') {}

  async get (key: string) {
    const [[, failures], [, ttl]] = await this.redis.multi()
      .get(this.prefix + key)
      .pttl(this.prefix + key)
      .exec() as [[null, string | null], [null, number]]
    if (failures === null || ttl <= 0) return { failures: 0, retryAfterSeconds: 0 }
    return { failures: Number(failures), retryAfterSeconds: Math.ceil(ttl / 1000) }
  }

  async record (key: string) {
    await this.redis.multi()
      .incr(this.prefix + key)
      .pexpire(this.prefix + key, this.windowMs, 'NX')
      .exec()
  }

  async reset (key: string) {
    await this.redis.del(this.prefix + key)
  }

  async close () {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }
}
