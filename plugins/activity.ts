import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ActivityRecorder } from '../lib/activity.js'

declare module 'fastify' {
  interface FastifyInstance {
    activity: ActivityRecorder
    /** A hook, after a token guard: the request's user was active now. */
    recordActivity: (request: FastifyRequest) => Promise<void>
  }
}

/** How often users' activity is written, and so how late another replica may see a user online. */
const ACTIVITY_INTERVAL_MS = 1000

/** Users' activity (logins, refreshes, authenticated requests), written in batches. */
export default fp(async function activity (fastify: FastifyInstance) {
  const recorder = new ActivityRecorder(async (seen) => { await fastify.store.recordActivity(seen) }, ACTIVITY_INTERVAL_MS,
    (error) => { fastify.log.warn({ err: error }, 'could not record users as seen; will try again') })
  fastify.decorate('activity', recorder)
  fastify.decorate('recordActivity', async function recordActivity (request: FastifyRequest) {
    if (request.user !== null) recorder.seen(request.user.id)
  })
  // Runs before the store's own onClose (hooks close in reverse order), while it can still write.
  fastify.addHook('onClose', async () => { await recorder.close() })
}, { name: 'activity', dependencies: ['store', 'tokens'] })
