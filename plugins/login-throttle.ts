import type { FastifyInstance, FastifyRequest } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'
import { connectRedis } from './redis-connection.js'
import { StoreOutageLog } from '../lib/store/outage-log.js'
import {
  type AttemptCount, type AttemptId, type FailureCounter, isStoreRefusal, MemoryFailureCounter, newAttemptId, RedisFailureCounter
} from '../lib/auth/failure-counter.js'

export interface LoginThrottleOptions {
  redisUrl?: string
  /** Failed logins allowed per username in a window (LOGIN_MAX_FAILURES_PER_USER). */
  maxFailuresPerUsername: number
  /** Failed logins allowed per client address in a window (LOGIN_MAX_FAILURES_PER_ADDRESS). */
  maxFailuresPerAddress: number
  /** LOGIN_FAILURE_WINDOW. */
  windowSeconds: number
}

export interface LoginThrottle {
  /**
   * Counts this attempt against the username and the client address, before the password is
   * checked; throws 429 when either has had its limit of failures, and 503 when the store failed
   * (the attempt then counts nowhere). Past a limit only with attempts still in flight, it waits
   * for them to settle.
   */
  attempt: (request: FastifyRequest, username: string) => Promise<void>
  /** The password was wrong: the attempt counts as a failure against both keys. */
  failed: (request: FastifyRequest, username: string) => void
  /** The attempt succeeded: it no longer counts, and the username's window is forgotten. */
  succeeded: (request: FastifyRequest, username: string) => Promise<void>
  /**
   * The password could not be checked (the database failed): the attempt no longer counts, so
   * that an outage does not lock out the users who keep trying through it.
   */
  abandoned: (request: FastifyRequest, username: string) => Promise<void>
  /** Logins refused with a 503 since start because the store (Redis) failed, for the metrics. */
  readonly refusedForStoreFailure: number
}

declare module 'fastify' {
  interface FastifyInstance {
    loginThrottle: LoginThrottle
  }
}

/**
 * How long an attempt past a limit only because of attempts in flight waits for them, polling
 * from 25 ms up to every 200 ms. Password checks settle in tens of milliseconds; what lasts longer
 * is the end of a Redis stall, when every login it held is in flight at once, beside counts that
 * timed out and whose give-backs queue behind them. A right password must not be refused for that.
 */
const IN_FLIGHT_WAIT_MS = 3000

const usernameKey = (username: string) => `user:${username.toLowerCase()}`
const addressKey = (request: FastifyRequest) => `addr:${request.ip}`

/**
 * Throttles failed logins, not logins: @fastify/rate-limit counts every request, while a
 * password-guessing defence must count failures per username and per client address (the
 * address is the socket's unless TRUST_PROXY names the load balancer). Each attempt is counted
 * before its password is checked and given back when it succeeds or cannot be checked, so
 * concurrent guesses cannot slip past the limit together. Each is counted under its own id, so
 * that giving it back removes exactly it, even when the store ran the count after giving up on it.
 */
export default fp(async function loginThrottle (fastify: FastifyInstance, options: LoginThrottleOptions) {
  const limits = options
  const windowMs = limits.windowSeconds * 1000
  const outageLog = new StoreOutageLog(fastify.log)
  const counter: FailureCounter = options.redisUrl !== undefined
    ? new RedisFailureCounter(connectRedis(options.redisUrl, outageLog), windowMs)
    : new MemoryFailureCounter(windowMs)
  fastify.addHook('onClose', async () => { await counter.close() })
  const attemptOf = new WeakMap<FastifyRequest, AttemptId>()
  let refusedForStoreFailure = 0

  /**
   * A throttle that cannot count must not let guesses through: the login answers 503, and the
   * attempt is given back, so that an outage locks nobody out. Every operation settles first, so
   * that each command is sent before its give-back. A Redis that refuses will not recover by
   * itself, so it is an error line; one that is away is the outage log's.
   */
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
    if (isStoreRefusal(failure.reason)) request.log.error({ err: failure.reason }, 'login throttle store refused a command')
    else outageLog.failed(failure.reason)
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
      if (attempt !== undefined) for (const key of [usernameKey(username), addressKey(request)]) counter.failed(key, attempt)
    },
    async succeeded (request, username) {
      giveBack(request, addressKey(request))
      await storeAnswers(request, [counter.reset(usernameKey(username))], () => { giveBack(request, usernameKey(username)) })
    },
    async abandoned (request, username) {
      giveBack(request, usernameKey(username), addressKey(request))
    },
    get refusedForStoreFailure () { return refusedForStoreFailure }
  } satisfies LoginThrottle)
}, { name: 'login-throttle' })
