import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * Fastify's request logging, one line per request instead of two: "request completed" at `info`,
 * written when the answer has been sent, with what an operator reads (method, URL with its tokens
 * redacted, route, status, response time; the request id, and the trace id when tracing is on,
 * come from the request's logger). "incoming request" is `debug` detail: a request that never
 * completes (a hung handler) still shows there.
 */
export class AccessLog extends LogController {
  override incomingRequest (request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const line = { req: request, res: reply, responseTime: reply.elapsedTime }
    if (error != null) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}
