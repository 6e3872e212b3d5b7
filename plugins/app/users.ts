import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CachedUsers } from '../../lib/users/cached-users.js'

declare module 'fastify' {
  interface FastifyInstance {
    users: CachedUsers
  }
}

export default fp(async function users (fastify: FastifyInstance) {
  const feed = fastify.database.countersFeed({
    lost: (error) => {
      fastify.log.warn(
        { err: error },
        'database notifications lost: reading the user counters per request until they are back'
      )
    },
    listening: () => { fastify.log.info('database notifications: listening for changes of the user counters') }
  })
  fastify.decorate('users', new CachedUsers(fastify.database, feed))
  if (feed === undefined) return
  feed.start()
  // Before the database closes its pool: the feed has its own connection.
  fastify.addHook('onClose', async () => { await feed.close() })
}, { name: 'users', dependencies: ['database'] })
