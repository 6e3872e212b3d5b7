import { createRequire } from 'node:module'
import type { Redis, RedisOptions } from 'ioredis'
import type { StoreOutageLog } from './outage-log.js'

/**
 * For stores of counts: no offline queue, so with Redis down a command fails at once instead of hanging; a stalled
 * command fails after commandTimeout but may still run, hence each login attempt's own id (failure-counter.ts).
 */
export const REDIS_CLIENT_OPTIONS = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  // A count whose login already answered 503 must not run later, on reconnection.
  autoResendUnfulfilledCommands: false,
  commandTimeout: 2000
} as const satisfies RedisOptions

/** The replica's one Redis client (plugins/app/redis.ts), shared by every store of counts. */
export function connectRedis (url: string): Redis {
  // Loaded only when configured: a replica without Redis does not carry the client.
  // Required, not imported: OpenTelemetry's ioredis instrumentation (plugins/external/tracing.ts) sees require.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
  return new Redis(url, REDIS_CLIENT_OPTIONS)
}

/** `outageLog` hears of every failure of the connection and of its return. */
export function reportOutages (redis: Redis, outageLog: StoreOutageLog): void {
  redis.on('error', (error) => { outageLog.failed(error) })
  redis.on('ready', () => { outageLog.answered() })
}
