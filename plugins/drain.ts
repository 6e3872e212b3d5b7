import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * While the app closes, responses to requests still in flight ask the client to close the
 * connection: otherwise a keep-alive connection that was busy when close began stays open
 * until its idle timeout, and the process cannot exit before then.
 */
export default fp(async function drain (fastify: FastifyInstance) {
  let closing = false
  fastify.addHook('preClose', async () => { closing = true })
  fastify.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
}, { name: 'drain' })
