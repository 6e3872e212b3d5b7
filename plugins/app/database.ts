import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Database } from '../../lib/store/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: Database
  }
}

export interface DatabasePluginOptions {
  databaseUrl: string
}

export default fp(async function database (fastify: FastifyInstance, options: DatabasePluginOptions) {
  const opened = Database.open(options.databaseUrl)
  fastify.decorate('database', opened)
  fastify.addHook('onClose', async () => { await opened.close() })
  await opened.migrate()
}, { name: 'database' })
