import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/** One log line per request: "request completed" at `info`; "incoming request" at `debug`, for requests that hang. */
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
