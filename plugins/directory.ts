import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ActivityRecorder } from '../lib/activity.js'
import { UserDirectory } from '../lib/user-directory.js'

declare module 'fastify' {
  interface FastifyInstance {
    directory: UserDirectory
    activity: ActivityRecorder
  }
}

/** How often users' activity is written, and so how late another replica may see a user online. */
export const ACTIVITY_INTERVAL_MS = 1000

/** The users as requests read them (lib/user-directory.ts) and their activity, written in batches. */
export default fp(async function directory (fastify: FastifyInstance) {
  fastify.decorate('directory', new UserDirectory(fastify.store))
  const activity = new ActivityRecorder(async (seen) => { await fastify.store.recordActivity(seen) }, ACTIVITY_INTERVAL_MS,
    (error) => { fastify.log.warn({ err: error }, 'could not record users as seen; will try again') })
  fastify.decorate('activity', activity)
  // Runs before the store's own onClose (hooks close in reverse order), while it can still write.
  fastify.addHook('onClose', async () => { await activity.close() })
}, { name: 'directory', dependencies: ['store'] })
