import fastifyCompress from '@fastify/compress'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { COMPRESSED } from '../../lib/http/compressed.js'

/** @fastify/compress for the routes that opt in with `compress: COMPRESSED` (lib/http/compressed.ts), and no other. */
export default fp(async function compression (fastify: FastifyInstance) {
  // Before @fastify/compress's: `compress: false` spares a route not opting in its onRequest hook on every request.
  fastify.addHook('onRoute', (route) => { route.compress ??= false })
  await fastify.register(fastifyCompress, { ...COMPRESSED, global: false })
}, { name: 'compression' })
