import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ActivityRecorder } from '../../lib/users/activity.js'
import type { SessionId } from '../../lib/store/session-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    activity: ActivityRecorder
    sessionUse: ActivityRecorder<SessionId>
    /** A hook, after a token guard: the request's user and session were active now. */
    recordActivity: (request: FastifyRequest) => Promise<void>
  }
}

/** How often users' activity is written, and so how late another replica may see a user online. */
const ACTIVITY_INTERVAL_MS = 1000

export default fp(async function activity (fastify: FastifyInstance) {
  const recorder = new ActivityRecorder(
    async (seen) => { await fastify.database.recordActivity(seen) },
    ACTIVITY_INTERVAL_MS,
    (error) => { fastify.log.warn({ err: error }, 'could not record users as seen; will try again') }
  )
  const sessionUse = new ActivityRecorder<SessionId>(
    async (seen) => { await fastify.database.sessions.recordUse(seen) },
    ACTIVITY_INTERVAL_MS,
    (error) => { fastify.log.warn({ err: error }, 'could not record the last use of sessions; will try again') }
  )
  fastify.decorate('activity', recorder)
  fastify.decorate('sessionUse', sessionUse)
  fastify.decorate('recordActivity', async function recordActivity (request: FastifyRequest) {
    if (request.user !== null) recorder.seen(request.user.id)
    if (request.session !== null) sessionUse.seen(request.session.id)
  })
  // Runs before the store's own onClose (hooks close in reverse order), while it can still write.
  fastify.addHook('onClose', async () => { await Promise.all([recorder.close(), sessionUse.close()]) })
}, { name: 'activity', dependencies: ['database', 'tokens'] })
