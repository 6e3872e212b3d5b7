import { createRequire } from 'node:module'
import type { Redis, RedisOptions } from 'ioredis'
import type { StoreOutageLog } from './outage-log.js'

/** No offline queue: with Redis down a command fails at once; a timed-out one may still run (failure-counter.ts). */
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

export function reportOutages (redis: Redis, outageLog: StoreOutageLog): void {
  redis.on('error', (error) => { outageLog.failed(error) })
  redis.on('ready', () => { outageLog.answered() })
}
