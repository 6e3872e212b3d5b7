import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { UserDirectory } from '../lib/user-directory.js'

declare module 'fastify' {
  interface FastifyInstance {
    directory: UserDirectory
  }
}

/** The users as requests read them, cached while the store's counters hold (lib/user-directory.ts). */
export default fp(async function directory (fastify: FastifyInstance) {
  fastify.decorate('directory', new UserDirectory(fastify.store))
}, { name: 'directory', dependencies: ['store'] })
