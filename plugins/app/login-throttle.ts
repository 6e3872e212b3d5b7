import type { FastifyInstance, FastifyRequest } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import fp from 'fastify-plugin'
import { HttpError } from '../../lib/http/errors.js'
import { reportOutages } from '../../lib/store/redis-connection.js'
import { StoreOutageLog } from '../../lib/store/outage-log.js'
import {
  type AttemptCount,
  type AttemptId,
  type FailureCounter,
  isStoreRefusal,
  MemoryFailureCounter,
  newAttemptId,
  RedisFailureCounter
} from '../../lib/auth/failure-counter.js'

export interface LoginThrottleOptions {
  maxFailuresPerUsername: number
  maxFailuresPerAddress: number
  windowSeconds: number
}

export interface LoginThrottle {
  /** Counted before the password check: 429 once either key has its limit of failures; 503 if the store failed. */
  attempt: (request: FastifyRequest, username: string) => Promise<void>
  failed: (request: FastifyRequest, username: string) => void
  succeeded: (request: FastifyRequest, username: string) => Promise<void>
  /** The password could not be checked: the attempt no longer counts, so an outage locks no one out. */
  abandoned: (request: FastifyRequest, username: string) => Promise<void>
  readonly refusedForStoreFailure: number
}

declare module 'fastify' {
  interface FastifyInstance {
    loginThrottle: LoginThrottle
  }
}

/** Outlasts the end of a Redis stall, when every login it held is in flight at once (docs/decisions.md, "Login"). */
const IN_FLIGHT_WAIT_MS = 3000

const usernameKey = (username: string) => `user:${username.toLowerCase()}`
const addressKey = (request: FastifyRequest) => `addr:${request.ip}`

/** Each attempt counted under its own id and given back by it, even if the store ran the count late. */
export default fp(async function loginThrottle (fastify: FastifyInstance, options: LoginThrottleOptions) {
  const limits = options
  const windowMs = limits.windowSeconds * 1000
  const outageLog = new StoreOutageLog(fastify.log)
  const { redis } = fastify
  if (redis !== undefined) reportOutages(redis, outageLog)
  const counter: FailureCounter = redis !== undefined
    ? new RedisFailureCounter(redis, windowMs)
    : new MemoryFailureCounter(windowMs)
  fastify.addHook('onClose', async () => { await counter.close() })
  const attemptOf = new WeakMap<FastifyRequest, AttemptId>()
  let refusedForStoreFailure = 0

  /** A throttle that cannot count lets no guess through: 503, the attempt given back. */
  async function storeAnswers<T extends readonly unknown[]> (
    request: FastifyRequest, operations: readonly [...{ [K in keyof T]: Promise<T[K]> }], giveBack: () => void
  ): Promise<T> {
    const outcomes = await Promise.allSettled(operations as ReadonlyArray<Promise<unknown>>)
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
    if (failure === undefined) {
      outageLog.answered()
      return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T
    }
    giveBack()
    if (isStoreRefusal(failure.reason)) {
      request.log.error({ err: failure.reason }, 'login throttle store refused a command')
    } else {
      outageLog.failed(failure.reason)
    }
    refusedForStoreFailure++
    throw new HttpError(503, 'Service unavailable')
  }

  function giveBack (request: FastifyRequest, ...keys: string[]): void {
    const attempt = attemptOf.get(request)
    if (attempt !== undefined) for (const key of keys) counter.giveBack(key, attempt)
  }

  fastify.decorate('loginThrottle', {
    async attempt (request, username) {
      const attempt = newAttemptId()
      attemptOf.set(request, attempt)
      const giveBackBoth = () => { giveBack(request, usernameKey(username), addressKey(request)) }
      const waitUntil = performance.now() + IN_FLIGHT_WAIT_MS
      for (let pause = 25; ; pause = Math.min(2 * pause, 200)) {
        const counts = await storeAnswers(request, [
          counter.hit(usernameKey(username), attempt, limits.maxFailuresPerUsername),
          counter.hit(addressKey(request), attempt, limits.maxFailuresPerAddress)
        ], giveBackBoth)
        const limited = [limits.maxFailuresPerUsername, limits.maxFailuresPerAddress]
          .map((limit, i) => ({ limit, count: counts[i] as AttemptCount }))
          .filter(({ limit, count }) => count.attempts > limit)
        if (limited.length === 0) return
        // Not checked: it counts against neither key, whether refused or waiting.
        giveBackBoth()
        const exhausted = limited.filter(({ limit, count }) => count.failures >= limit)
        if (exhausted.length > 0) {
          const retryAfter = Math.max(...exhausted.map(({ count }) => count.retryAfterSeconds))
          throw new HttpError(429, 'Too many requests', { 'retry-after': String(retryAfter) })
        }
        if (performance.now() + pause > waitUntil) throw new HttpError(429, 'Too many requests', { 'retry-after': '1' })
        await sleep(pause)
      }
    },
    failed (request, username) {
      const attempt = attemptOf.get(request)
      if (attempt !== undefined) {
        for (const key of [usernameKey(username), addressKey(request)]) counter.failed(key, attempt)
      }
    },
    async succeeded (request, username) {
      giveBack(request, addressKey(request))
      await storeAnswers(request, [counter.reset(usernameKey(username))], () => {
        giveBack(request, usernameKey(username))
      })
    },
    async abandoned (request, username) {
      giveBack(request, usernameKey(username), addressKey(request))
    },
    get refusedForStoreFailure () { return refusedForStoreFailure }
  } satisfies LoginThrottle)
}, { name: 'login-throttle', dependencies: ['redis'] })
