import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import { redisCounterClientOptions } from '../lib/auth/failure-counter.js'
import type { StoreOutageLog } from '../lib/store/outage-log.js'

/**
 * A Redis client for a store of counts: commands fail fast while Redis is away (no offline queue,
 * a command timeout), and the outage log hears of every failure and of the return.
 */
export function connectRedis (url: string, outageLog: StoreOutageLog): Redis {
  // Loaded only when configured: a replica without Redis does not carry the client (~15 MB).
  // Required, not imported: OpenTelemetry's ioredis instrumentation (plugins/tracing.ts) sees require.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
  const redis = new Redis(url, redisCounterClientOptions)
  redis.on('error', (error) => { outageLog.failed(error) })
  redis.on('ready', () => { outageLog.answered() })
  return redis
}
