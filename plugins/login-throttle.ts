import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { HttpError } from './errors.js'
import { type FailureCounter, MemoryFailureCounter, RedisFailureCounter } from '../lib/failure-counter.js'

export interface LoginThrottleOptions {
  redisUrl?: string
  /** Failed logins allowed per username in a window. */
  maxFailuresPerUsername?: number
  /** Failed logins allowed per client address in a window. */
  maxFailuresPerAddress?: number
  windowSeconds?: number
}

export interface LoginThrottle {
  /**
   * Counts this attempt against the username and the client address, before the password is
   * checked; throws 429 when either is past its limit.
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

export const loginThrottleDefaults = {
  maxFailuresPerUsername: 5,
  maxFailuresPerAddress: 20,
  windowSeconds: 900
} as const

const usernameKey = (username: string) => `user:${username.toLowerCase()}`
const addressKey = (request: FastifyRequest) => `addr:${request.ip}`

async function connectRedis (fastify: FastifyInstance, url: string): Promise<Redis> {
  // Loaded only when configured: a replica without Redis does not carry the client (~15 MB).
  // Required, not imported: OpenTelemetry's ioredis instrumentation (lib/tracing.ts) sees require.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
  // No offline queue: while Redis is down, logins answer 503 at once instead of hanging.
  // A Redis that stops answering (a dropped network) fails the command after commandTimeout.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 2000 })
  redis.on('error', (error) => { fastify.log.warn({ err: error }, 'login throttle store unavailable') })
  return redis
}

/**
 * A throttle that cannot count must not let guesses through: the login answers 503. A Redis that
 * is away is logged by the client's 'error' event; one that answers but refuses (a command its
 * version lacks, a read-only replica, an ACL) will not recover by itself, so it is an error line.
 */
async function unavailableOnFailure<T> (request: FastifyRequest, operation: Promise<T>, onFailure: () => void): Promise<T> {
  try {
    return await operation
  } catch (error) {
    if (error instanceof Error && error.name === 'ReplyError') request.log.error({ err: error }, 'login throttle store refused a command')
    onFailure()
    throw new HttpError(503, 'Service unavailable')
  }
}

/**
 * Throttles failed logins, not logins: @fastify/rate-limit counts every request, while a
 * password-guessing defence must count failures per username and per client address (the
 * address is the socket's unless TRUST_PROXY names the load balancer). Each attempt is counted
 * before its password is checked and given back when it succeeds, so concurrent guesses cannot
 * slip past the limit together.
 */
export default fp(async function loginThrottle (fastify: FastifyInstance, options: LoginThrottleOptions) {
  const limits = { ...loginThrottleDefaults, ...options }
  const windowMs = limits.windowSeconds * 1000
  const counter: FailureCounter = options.redisUrl !== undefined
    ? new RedisFailureCounter(await connectRedis(fastify, options.redisUrl), windowMs)
    : new MemoryFailureCounter(windowMs)
  fastify.addHook('onClose', async () => { await counter.close() })
  let refusedForStoreFailure = 0
  const countRefusal = () => { refusedForStoreFailure++ }

  fastify.decorate('loginThrottle', {
    async attempt (request, username) {
      const [perUsername, perAddress] = await unavailableOnFailure(request, Promise.all([
        counter.hit(usernameKey(username)),
        counter.hit(addressKey(request))
      ]), countRefusal)
      const waits = [
        perUsername.attempts > limits.maxFailuresPerUsername ? perUsername.retryAfterSeconds : 0,
        perAddress.attempts > limits.maxFailuresPerAddress ? perAddress.retryAfterSeconds : 0
      ]
      const retryAfter = Math.max(...waits)
      if (retryAfter > 0) {
        throw new HttpError(429, 'Too many requests', { 'retry-after': String(retryAfter) })
      }
    },
    async succeeded (request, username) {
      await unavailableOnFailure(request, Promise.all([counter.reset(usernameKey(username)), counter.release(addressKey(request))]), countRefusal)
    },
    async abandoned (request, username) {
      await Promise.allSettled([counter.release(usernameKey(username)), counter.release(addressKey(request))])
    },
    get refusedForStoreFailure () { return refusedForStoreFailure }
  } satisfies LoginThrottle)
}, { name: 'login-throttle' })
