import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { connectRedis } from '../../lib/store/redis-connection.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** With REDIS_URL, the replica's one Redis connection: the failed-login counts and the fair share's. */
    redis: Redis | undefined
  }
}

export interface RedisPluginOptions {
  url?: string
}

export default fp(async function redis (fastify: FastifyInstance, options: RedisPluginOptions) {
  const client = options.url === undefined ? undefined : connectRedis(options.url)
  fastify.decorate('redis', client)
  if (client === undefined) return
  fastify.addHook('onClose', async () => { await client.quit().catch(() => { client.disconnect() }) })
}, { name: 'redis' })
