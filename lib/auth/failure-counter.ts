import { randomUUID } from 'node:crypto'
import type { Redis, RedisOptions, Result } from 'ioredis'
import { LRUCache } from 'lru-cache'

/** A key's count inside a fixed window that starts with its first attempt. */
export interface AttemptCount {
  /** Every attempt counted, this one included: those that failed and those still being checked. */
  attempts: number
  /** Of those, the attempts known to have failed. */
  failures: number
  retryAfterSeconds: number
}

declare const attemptBrand: unique symbol
/** One login attempt, counted under this id so that giving it back removes exactly it. */
export type AttemptId = string & { readonly [attemptBrand]: 'attempt' }

export function newAttemptId (): AttemptId {
  return randomUUID() as AttemptId
}

/**
 * Counts login attempts that have not (yet) succeeded, per key. An attempt is counted before
 * the password is checked, given back if it succeeds and marked if it fails, so a burst of
 * concurrent guesses cannot all pass the limit before any of them is counted, and a caller can
 * tell attempts that failed from attempts still in flight.
 */
export interface FailureCounter {
  /**
   * Counts the attempt and returns the count including it. An attempt past `limit` is answered
   * but not kept: it will be refused, and a flood of refused guesses must not grow the window.
   */
  hit: (key: string, attempt: AttemptId, limit: number) => Promise<AttemptCount>
  /**
   * Takes the attempt back if it was counted; an attempt never counted, or given back already,
   * changes nothing. Never fails: a store that is away gets it once it is back.
   */
  giveBack: (key: string, attempt: AttemptId) => void
  /** The attempt's password was wrong: it counts as a failure until its window ends. Never fails, as giveBack. */
  failed: (key: string, attempt: AttemptId) => void
  /** Forgets the key's window. */
  reset: (key: string) => Promise<void>
  close: () => Promise<void>
}

export class MemoryFailureCounter implements FailureCounter {
  /** Per key, its window's attempts: true for those that failed. */
  private readonly windows = new Map<string, { attempts: Map<AttemptId, boolean>, endsAt: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly windowMs: number, private readonly now: () => number = Date.now) {
    // Keeps memory bounded under a spray of usernames: windows that ended are dropped.
    this.sweeper = setInterval(() => {
      const time = this.now()
      for (const [key, window] of this.windows) if (window.endsAt <= time) this.windows.delete(key)
    }, Math.min(windowMs, 60_000))
    this.sweeper.unref()
  }

  async hit (key: string, attempt: AttemptId, limit: number): Promise<AttemptCount> {
    const time = this.now()
    let window = this.windows.get(key)
    if (window === undefined || window.endsAt <= time) {
      window = { attempts: new Map(), endsAt: time + this.windowMs }
      this.windows.set(key, window)
    }
    const attempts = window.attempts.size + 1
    let failures = 0
    for (const failed of window.attempts.values()) if (failed) failures++
    if (attempts <= limit) window.attempts.set(attempt, false)
    // Nothing kept (a limit of 0): as in Redis, no window starts.
    else if (window.attempts.size === 0) this.windows.delete(key)
    return { attempts, failures, retryAfterSeconds: Math.ceil((window.endsAt - time) / 1000) }
  }

  failed (key: string, attempt: AttemptId): void {
    const attempts = this.windows.get(key)?.attempts
    if (attempts?.has(attempt) === true) attempts.set(attempt, true)
  }

  giveBack (key: string, attempt: AttemptId): void {
    const window = this.windows.get(key)
    if (window === undefined) return
    window.attempts.delete(attempt)
    // As a Redis hash without fields: a window with nothing counted in it has ended.
    if (window.attempts.size === 0) this.windows.delete(key)
  }

  async reset (key: string): Promise<void> {
    this.windows.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.sweeper)
  }
}

/**
 * The client options the Redis counter relies on. No offline queue: while Redis is down, logins
 * answer 503 at once instead of hanging. A Redis that stops answering (a dropped network, a
 * stall) fails the command after commandTimeout; it may still run it later, which is why an
 * attempt is counted under its own id and given back by that id.
 */
export const redisCounterClientOptions = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  // A count its login already answered 503 for must not run later, when the client reconnects.
  autoResendUnfulfilledCommands: false,
  commandTimeout: 2000
} as const satisfies RedisOptions

/**
 * One attempt, atomically: a hash field per attempt (its size is the count), `p` while in
 * flight, kept only up to the limit, and a key that has no expiry yet (its window's first
 * attempt) gets the window's. Any other value is a failure: `f`, and the `1` of releases that
 * did not tell the two apart. `PEXPIRE … NX` would say the same in one command, but it came with
 * Redis 7.0; this script runs on Redis 6.2 and Valkey too.
 */
const COUNT_ATTEMPT = `
local values = redis.call('hvals', KEYS[1])
local attempts = #values + 1
local failures = 0
for _, value in ipairs(values) do
  if value ~= 'p' then failures = failures + 1 end
end
if attempts <= tonumber(ARGV[3]) then redis.call('hset', KEYS[1], ARGV[1], 'p') end
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  ttl = tonumber(ARGV[2])
  redis.call('pexpire', KEYS[1], ttl)
elseif ttl == -2 then
  ttl = tonumber(ARGV[2])
end
return {attempts, failures, ttl}`

/** Marks an attempt failed if it is still counted: never brings back one given back or whose window ended. */
const MARK_FAILED = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], 'f') end`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** [attempts, failures, window's remaining ms] */
    countAttempt: (key: string, attempt: AttemptId, windowMs: number, limit: number) => Result<[number, number, number], Context>
    markFailed: (key: string, attempt: AttemptId) => Result<null, Context>
  }
}

/** A give-back or a failure Redis has not confirmed: the key (prefixed) and the attempt. */
interface UnconfirmedChange { key: string, attempt: AttemptId, change: 'give back' | 'failed' }

const idOf = (change: Pick<UnconfirmedChange, 'key' | 'attempt'>) => `${change.attempt} ${change.key}`

/** Redis answered, and with an error: a command its version lacks, a read-only replica, an ACL, a key of another type. */
export const isStoreRefusal = (error: unknown): boolean => error instanceof Error && error.name === 'ReplyError'

export interface RedisFailureCounterOptions {
  prefix?: string
  /**
   * Give-backs and failures kept while Redis is away; past it the oldest is dropped: its attempt
   * counts until its window ends, as in flight if it was a failure.
   */
  maxUnconfirmedChanges?: number
}

/**
 * Its keys are hashes. The release before kept strings under `meridian:login-attempts:`: sharing
 * keys, each would answer the other's with WRONGTYPE during a rolling upgrade.
 */
const DEFAULT_PREFIX = 'meridian:login-attempts:v2:'

/** The same counter in Redis, so every replica sees every attempt. */
export class RedisFailureCounter implements FailureCounter {
  private readonly prefix: string
  /**
   * Kept until Redis confirms, a timed-out one too: sent again at each reconnection, it still
   * lands if Redis failed over before running it. An attempt's key ends with its window, so a
   * change older than a window has nothing left to change.
   */
  private readonly unconfirmed: LRUCache<string, UnconfirmedChange>
  /**
   * Counts refused before they were sent (no connection, no offline queue): their give-backs have
   * nothing to take, and kept they would crowd out the ones that matter. Each is removed by its
   * give-back, which follows at once; bounded all the same.
   */
  private readonly neverSent: LRUCache<string, true>

  constructor (private readonly redis: Redis, private readonly windowMs: number, options: RedisFailureCounterOptions = {}) {
    this.prefix = options.prefix ?? DEFAULT_PREFIX
    this.unconfirmed = new LRUCache({ max: options.maxUnconfirmedChanges ?? 10_000, ttl: windowMs })
    this.neverSent = new LRUCache({ max: 10_000 })
    // Sent with EVALSHA, and with EVAL once when the server does not have the script yet.
    redis.defineCommand('countAttempt', { numberOfKeys: 1, lua: COUNT_ATTEMPT })
    redis.defineCommand('markFailed', { numberOfKeys: 1, lua: MARK_FAILED })
    // A count the lost connection left unanswered may have run: its give-back is sent again.
    redis.on('ready', () => { this.unconfirmed.forEach((change) => { this.send(change) }) })
  }

  async hit (key: string, attempt: AttemptId, limit: number): Promise<AttemptCount> {
    // Without a ready connection ioredis refuses the command without sending it.
    if (this.redis.status !== 'ready') this.neverSent.set(idOf({ key: this.prefix + key, attempt }), true)
    const [attempts, failures, ttl] = await this.redis.countAttempt(this.prefix + key, attempt, this.windowMs, limit)
    return { attempts, failures, retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) }
  }

  giveBack (key: string, attempt: AttemptId): void {
    const giveBack = { key: this.prefix + key, attempt, change: 'give back' } as const
    if (this.neverSent.delete(idOf(giveBack))) return
    this.unconfirmed.set(idOf(giveBack), giveBack)
    this.send(giveBack)
  }

  failed (key: string, attempt: AttemptId): void {
    const failure = { key: this.prefix + key, attempt, change: 'failed' } as const
    this.unconfirmed.set(idOf(failure), failure)
    this.send(failure)
  }

  /**
   * Commands on one connection run in order, so a change sent after its count runs after it,
   * however late that count runs. One Redis refused will not take later either: it is dropped.
   */
  private send (change: UnconfirmedChange): void {
    const sent = change.change === 'give back' ? this.redis.hdel(change.key, change.attempt) : this.redis.markFailed(change.key, change.attempt)
    sent.then(() => { this.unconfirmed.delete(idOf(change)) }, (error: unknown) => {
      if (isStoreRefusal(error)) this.unconfirmed.delete(idOf(change))
    })
  }

  async reset (key: string): Promise<void> {
    await this.redis.del(this.prefix + key)
  }

  async close (): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }
}
