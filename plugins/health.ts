import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from './errors.js'
import { errorResponses } from '../schemas/common.js'

const Status = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false, examples: [{ status: 'ok' }] })

/**
 * Probes for the orchestrator: live while the process runs, ready while the database answers
 * and the replica is not draining for a shutdown.
 */
export default fp(async function health (fastify: FastifyInstance) {
  fastify.get('/health/live', {
    schema: { tags: ['operations'], operationId: 'getLiveness', security: [], summary: 'The process runs', response: { 200: Status, ...errorResponses([400, 500]) } },
    // A stalled event loop is overload, not death: liveness must not tell the orchestrator
    // to restart a process that is merely busy (under-pressure lets the request through).
    config: { pressureHandler: () => undefined }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/health/ready', {
    schema: { tags: ['operations'], operationId: 'getReadiness', security: [], summary: 'The database answers and the replica is not shutting down', response: { 200: Status, ...errorResponses([400, 500, 503], { 503: 'Database unavailable' }) } }
  }, async (request) => {
    if (fastify.draining) throw new HttpError(503, 'Shutting down')
    try {
      await fastify.store.ping()
    } catch (error) {
      request.log.warn({ err: error }, 'database not ready')
      throw new HttpError(503, 'Database unavailable')
    }
    return { status: 'ok' as const }
  })
}, { name: 'health', dependencies: ['store', 'drain'] })
