import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'
import { connectRedis } from './redis-connection.js'
import { StoreOutageLog } from '../lib/store-outage-log.js'
import {
  type AttemptId, type FailureCounter, isStoreRefusal, MemoryFailureCounter, newAttemptId, RedisFailureCounter
} from '../lib/failure-counter.js'

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
   * checked; throws 429 when either is past its limit, and 503 when the store failed (the attempt
   * then counts nowhere).
   */
  attempt: (request: FastifyRequest, username: string) => Promise<void>
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
    const outcomes = await Promise.allSettled(operations)
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
      const [perUsername, perAddress] = await storeAnswers(request, [
        counter.hit(usernameKey(username), attempt, limits.maxFailuresPerUsername),
        counter.hit(addressKey(request), attempt, limits.maxFailuresPerAddress)
      ], giveBackBoth)
      const waits = [
        perUsername.attempts > limits.maxFailuresPerUsername ? perUsername.retryAfterSeconds : 0,
        perAddress.attempts > limits.maxFailuresPerAddress ? perAddress.retryAfterSeconds : 0
      ]
      const retryAfter = Math.max(...waits)
      if (retryAfter > 0) {
        // Refused before its password was checked: it counts against neither key.
        giveBackBoth()
        throw new HttpError(429, 'Too many requests', { 'retry-after': String(retryAfter) })
      }
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
