import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { UserDirectory } from '../lib/users/directory.js'

declare module 'fastify' {
  interface FastifyInstance {
    directory: UserDirectory
  }
}

/**
 * The users as requests read them, cached while the store's counters hold (lib/users/directory.ts).
 * On PostgreSQL the counters are told by the database as they change (lib/store/counters-feed.ts),
 * one listening connection per replica; while it is down, each request reads them itself.
 */
export default fp(async function directory (fastify: FastifyInstance) {
  const feed = fastify.store.countersFeed({
    lost: (error) => { fastify.log.warn({ err: error }, 'database notifications lost: reading the user counters per request until they are back') },
    listening: () => { fastify.log.info('database notifications: listening for changes of the user counters') }
  })
  fastify.decorate('directory', new UserDirectory(fastify.store, feed))
  if (feed === undefined) return
  feed.start()
  // Before the store closes its pool: the feed has its own connection.
  fastify.addHook('onClose', async () => { await feed.close() })
}, { name: 'directory', dependencies: ['store'] })
