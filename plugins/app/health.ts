import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { HttpError } from '../../lib/http/errors.js'
import { unavailabilityReason } from '../../lib/store/unavailable.js'
import { errorResponses, ref, Status } from '../../schemas/common.js'

/** Why the replica is not ready (the database's error, if that is why), or undefined when it is. */
async function unreadiness (fastify: FastifyInstance): Promise<{ message: string, error?: unknown } | undefined> {
  if (fastify.draining) return { message: 'Shutting down' }
  try {
    await fastify.database.ping()
  } catch (error) {
    return { message: 'Database unavailable', error }
  }
  return undefined
}

/** Probes for the orchestrator: live while the process runs, ready while the database answers and not draining. */
export default fp(async function health (fastify: FastifyInstance) {
  fastify.get('/health/live', {
    schema: {
      tags: ['operations'],
      operationId: 'getLiveness',
      security: [],
      summary: 'The process runs',
      response: { 200: ref(Status), ...errorResponses([400, 500]) }
    },
    // A stalled event loop is overload, not death: liveness must not get a merely busy process restarted.
    config: { pressureHandler: () => undefined }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/health/ready', {
    schema: {
      tags: ['operations'],
      operationId: 'getReadiness',
      security: [],
      summary: 'The database answers and the replica is not shutting down',
      response: { 200: ref(Status), ...errorResponses([400, 500, 503], { 503: 'Database unavailable' }) }
    }
  }, async (request) => {
    const reason = await unreadiness(fastify)
    if (reason !== undefined) {
      // The error's code and message, no stack: a probe every few seconds for as long as the database is away.
      if (reason.error !== undefined) {
        request.log.warn({ reason: unavailabilityReason(reason.error) }, 'database not ready')
      }
      throw new HttpError(503, reason.message)
    }
    return { status: 'ok' as const }
  })

  // The same answer for Prometheus, so an alert on a replica that stays unready needs no orchestrator probing it.
  new Gauge({
    name: 'meridian_ready',
    help: 'Whether /health/ready would answer 200 (1) or 503 (0): the database answers and the replica is not draining',
    registers: [fastify.metricsRegistry],
    async collect () { this.set((await unreadiness(fastify)) === undefined ? 1 : 0) }
  })
}, { name: 'health', dependencies: ['database', 'drain', 'metrics'] })
