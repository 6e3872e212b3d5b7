import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { UserStore } from '../lib/store/user-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    store: UserStore
  }
}

export interface StorePluginOptions {
  databaseUrl: string
}

/** Opens the user store, brings its schema up to date before the app is ready, closes it last. */
export default fp(async function store (fastify: FastifyInstance, options: StorePluginOptions) {
  const userStore = UserStore.open(options.databaseUrl)
  fastify.decorate('store', userStore)
  fastify.addHook('onClose', async () => { await userStore.close() })
  await userStore.migrate()
}, { name: 'store' })
