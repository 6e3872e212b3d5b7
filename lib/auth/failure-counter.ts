import { randomUUID } from 'node:crypto'
import type { Redis, Result } from 'ioredis'
import { LRUCache } from 'lru-cache'

/** A key's count inside a fixed window that starts with its first attempt. */
export interface AttemptCount {
  /** Includes this attempt, and those still in flight. */
  attempts: number
  failures: number
  retryAfterSeconds: number
}

declare const attemptBrand: unique symbol
/** Counted under its own id, so a give-back removes exactly this attempt. */
export type AttemptId = string & { readonly [attemptBrand]: 'attempt' }

export function newAttemptId (): AttemptId {
  return randomUUID() as AttemptId
}

/** Counts attempts before the password check, so concurrent guesses cannot slip past; success gives one back. */
export interface FailureCounter {
  /** One past `limit` is answered but not kept: refused guesses must not grow the window. */
  hit: (key: string, attempt: AttemptId, limit: number) => Promise<AttemptCount>
  /** Idempotent. Never fails: a store that is away gets it once it is back. */
  giveBack: (key: string, attempt: AttemptId) => void
  /** Counts as a failure until its window ends. Never fails, as giveBack. */
  failed: (key: string, attempt: AttemptId) => void
  reset: (key: string) => Promise<void>
  close: () => Promise<void>
}

export class MemoryFailureCounter implements FailureCounter {
  /** Per key: attempt → whether it failed. */
  private readonly windows = new Map<string, { attempts: Map<AttemptId, boolean>, endsAt: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly windowMs: number, private readonly now: () => number = Date.now) {
    // Bounds memory under a spray of usernames.
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
    // As in Redis, where a hash without fields no longer exists.
    if (window.attempts.size === 0) this.windows.delete(key)
  }

  async reset (key: string): Promise<void> {
    this.windows.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.sweeper)
  }
}

/** Atomic; a field per attempt, `p` in flight, else failed. First expiry by hand: `PEXPIRE … NX` needs Redis 7.0. */
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

/** Only if still counted: never revives an attempt given back or whose window ended. */
const MARK_FAILED = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], 'f') end`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** [attempts, failures, window's remaining ms] */
    countAttempt: (
      key: string,
      attempt: AttemptId,
      windowMs: number,
      limit: number
    ) => Result<[number, number, number], Context>
    markFailed: (key: string, attempt: AttemptId) => Result<null, Context>
  }
}

interface UnconfirmedChange { key: string, attempt: AttemptId, change: 'give back' | 'failed' }

const idOf = (change: Pick<UnconfirmedChange, 'key' | 'attempt'>) => `${change.attempt} ${change.key}`

/** Redis answered with an error (a missing command, a read-only replica, an ACL, WRONGTYPE): a retry cannot help. */
export const isStoreRefusal = (error: unknown): boolean => error instanceof Error && error.name === 'ReplyError'

export interface RedisFailureCounterOptions {
  prefix?: string
  /** Kept while Redis is away; past it the oldest is dropped and its attempt counts until its window ends. */
  maxUnconfirmedChanges?: number
}

/** v2: the keys became hashes; sharing the old string keys would answer WRONGTYPE during a rolling upgrade. */
const DEFAULT_PREFIX = 'meridian:login-attempts:v2:'

export class RedisFailureCounter implements FailureCounter {
  private readonly prefix: string
  /** Resent at each reconnection until confirmed, timed-out ones too (lost in a failover); a window ends its key. */
  private readonly unconfirmed: LRUCache<string, UnconfirmedChange>
  /** Counts refused unsent: their give-backs have nothing to take and must not crowd out the ones that matter. */
  private readonly neverSent: LRUCache<string, true>

  constructor (
    private readonly redis: Redis,
    private readonly windowMs: number,
    options: RedisFailureCounterOptions = {}
  ) {
    this.prefix = options.prefix ?? DEFAULT_PREFIX
    this.unconfirmed = new LRUCache({ max: options.maxUnconfirmedChanges ?? 10_000, ttl: windowMs })
    this.neverSent = new LRUCache({ max: 10_000 })
    redis.defineCommand('countAttempt', { numberOfKeys: 1, lua: COUNT_ATTEMPT })
    redis.defineCommand('markFailed', { numberOfKeys: 1, lua: MARK_FAILED })
    // A count left unanswered by a lost connection may have run: its give-back is sent again.
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

  /** Same connection as the count, so it runs after it however late. What Redis refuses it will always refuse. */
  private send (change: UnconfirmedChange): void {
    const sent = change.change === 'give back'
      ? this.redis.hdel(change.key, change.attempt)
      : this.redis.markFailed(change.key, change.attempt)
    sent.then(() => { this.unconfirmed.delete(idOf(change)) }, (error: unknown) => {
      if (isStoreRefusal(error)) this.unconfirmed.delete(idOf(change))
    })
  }

  async reset (key: string): Promise<void> {
    await this.redis.del(this.prefix + key)
  }

  /** The client is not the counter's to close: the replica's one Redis client (plugins/app/redis.ts) outlives it. */
  async close (): Promise<void> {}
}
