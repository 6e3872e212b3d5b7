import type { Redis, Result } from 'ioredis'

/** A key's count inside a fixed window that starts with its first attempt. */
export interface AttemptCount { attempts: number, retryAfterSeconds: number }

/**
 * Counts login attempts that have not (yet) succeeded, per key. An attempt is counted before
 * the password is checked and handed back if it succeeds, so a burst of concurrent guesses
 * cannot all pass the limit before any of them is counted.
 */
export interface FailureCounter {
  /** Counts one more attempt and returns the count including it. */
  hit: (key: string) => Promise<AttemptCount>
  /** Takes back one attempt (it succeeded). */
  release: (key: string) => Promise<void>
  /** Forgets the key's window. */
  reset: (key: string) => Promise<void>
  close: () => Promise<void>
}

export class MemoryFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { attempts: number, endsAt: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly windowMs: number, private readonly now: () => number = Date.now) {
    // Keeps memory bounded under a spray of usernames: windows that ended are dropped.
    this.sweeper = setInterval(() => {
      const time = this.now()
      for (const [key, window] of this.windows) if (window.endsAt <= time) this.windows.delete(key)
    }, Math.min(windowMs, 60_000))
    this.sweeper.unref()
  }

  async hit (key: string): Promise<AttemptCount> {
    const time = this.now()
    let window = this.windows.get(key)
    if (window === undefined || window.endsAt <= time) {
      window = { attempts: 0, endsAt: time + this.windowMs }
      this.windows.set(key, window)
    }
    window.attempts++
    return { attempts: window.attempts, retryAfterSeconds: Math.ceil((window.endsAt - time) / 1000) }
  }

  async release (key: string): Promise<void> {
    const window = this.windows.get(key)
    if (window !== undefined && window.attempts > 0) window.attempts--
  }

  async reset (key: string): Promise<void> {
    this.windows.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.sweeper)
  }
}

/**
 * One attempt, atomically: the count goes up, and a key that has no expiry yet (its window's
 * first attempt) gets the window's. `PEXPIRE … NX` would say the same in one command, but it
 * came with Redis 7.0; this script runs on Redis 6.2 and Valkey too.
 */
const COUNT_ATTEMPT = `
local attempts = redis.call('incr', KEYS[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  ttl = tonumber(ARGV[1])
  redis.call('pexpire', KEYS[1], ttl)
end
return {attempts, ttl}`

/** Takes one attempt back: never below zero, and never resurrecting a window that has ended. */
const RELEASE_ATTEMPT = `
if (tonumber(redis.call('get', KEYS[1]) or '0') > 0) then return redis.call('decr', KEYS[1]) end
return 0`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** [attempts, window's remaining ms] */
    countAttempt: (key: string, windowMs: number) => Result<[number, number], Context>
    releaseAttempt: (key: string) => Result<number, Context>
  }
}

/** The same counter in Redis, so every replica sees every attempt. */
export class RedisFailureCounter implements FailureCounter {
  constructor (private readonly redis: Redis, private readonly windowMs: number, private readonly prefix = 'meridian:login-attempts:') {
    // Sent with EVALSHA, and with EVAL once when the server does not have the script yet.
    redis.defineCommand('countAttempt', { numberOfKeys: 1, lua: COUNT_ATTEMPT })
    redis.defineCommand('releaseAttempt', { numberOfKeys: 1, lua: RELEASE_ATTEMPT })
  }

  async hit (key: string): Promise<AttemptCount> {
    const [attempts, ttl] = await this.redis.countAttempt(this.prefix + key, this.windowMs)
    return { attempts, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) }
  }

  async release (key: string): Promise<void> {
    await this.redis.releaseAttempt(this.prefix + key)
  }

  async reset (key: string): Promise<void> {
    await this.redis.del(this.prefix + key)
  }

  async close (): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }
}
