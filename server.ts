import type { Server } from 'node:http'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { type Config, isTracingOn } from './config.js'
import { ensureDemoUsers } from './lib/users/demo-users.js'
import { listenForMetrics } from './plugins/app/metrics.js'

/** Milliseconds in-flight requests get to finish, after the drain, before the process exits anyway. */
const GRACE_PERIOD_MS = 10_000

/** Builds the app and listens. SIGTERM drains for DRAIN_SECONDS, then closes; SIGINT skips the drain. */
export async function serve (config: Config): Promise<void> {
  // Before the app: its database and Redis clients load as it builds, and must load instrumented.
  const tracing = isTracingOn(config) ? (await import('./plugins/external/tracing.js')).startTracing() : undefined
  const app = await buildApp(config, tracing === undefined ? {} : { tracing })
  let metricsServer: Server | undefined
  try {
    await app.ready()
    const isEmbedded = config.DATABASE_URL.startsWith('sqlite:')
    if (isEmbedded && config.NODE_ENV !== 'production') {
      const created = await ensureDemoUsers(app.database)
      if (created > 0) app.log.info({ created }, 'created demo users on the empty database')
    }
    await app.listen({ host: config.HOST, port: config.PORT })
    metricsServer = config.METRICS_PORT === undefined
      ? undefined
      : await listenForMetrics(app, config.METRICS_HOST ?? config.HOST, config.METRICS_PORT)
  } catch (error) {
    // A start that fails (port taken, bad HOST) must exit non-zero: close, then let it propagate.
    await app.close()
    await tracing?.shutdown()
    throw error
  }
  // Only once listening: close-with-grace exits 0 on its way out, which would hide a failed start.
  closeWithGrace({ delay: config.DRAIN_SECONDS * 1000 + GRACE_PERIOD_MS }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an unexpected error')
    else app.log.info({ signal }, 'closing')
    if (signal === 'SIGTERM') await app.drain()
    await app.close()
    await tracing?.shutdown()
    // Last: Prometheus scrapes the replica until it exits (its final counts included).
    metricsServer?.close()
    metricsServer?.closeAllConnections()
    // The last line, just before the exit: pino writes the lines it still holds as the process exits.
    app.log.info('closed')
  })
}
