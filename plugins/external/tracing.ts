/** Tokens travel in query strings and bodies: no span holds either (path only, statements without values). */
import { setTimeout as sleep } from 'node:timers/promises'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AccessLog } from '../../lib/http/access-log.js'
import { redactUrl } from '../../lib/auth/redact.js'
import { packageInfo } from '../../lib/package-info.js'

const SHUTDOWN_BOUND_MS = 2000

export interface Tracing {
  plugin: FastifyPluginAsync
  /** The app's Fastify `logController`: the plugin writes the "incoming request" line itself. */
  logController: AccessLog
  shutdown: () => Promise<void>
}

/** Redacted as in the logs: a client may put a token in the path by mistake. */
const pathOf = (url: string): string => redactUrl(url.split('?', 1)[0] as string)

/** Fastify logs "incoming request" before the first hook: the tracing plugin logs it, with the trace id. */
class IncomingLoggedByTracing extends AccessLog {
  override incomingRequest (): void {}
}

/** Before `pg` and `ioredis` load, by `require` (connect.ts, redis-connection.ts): the instrumentations hook it. */
export function startTracing (): Tracing {
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override these.
    resource: resourceFromAttributes({ 'service.name': packageInfo.name, 'service.version': packageInfo.version })
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())]
  })
  // Also installs `traceparent` propagation and async context.
  provider.register()
  const instrumentations = [
    new PgInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true })
  ]
  const fastifyOtel = new FastifyOtelInstrumentation({
    // An exception event carries the error's stack, whose first line quotes a malformed body.
    recordExceptions: false,
    requestHook (span, request) {
      // @fastify/otel records the raw URL, query string and all: the tokens' place.
      span.setAttribute('url.path', pathOf(request.url))
      if (request.routeOptions.url !== undefined) span.updateName(`${request.method} ${request.routeOptions.url}`)
    }
  })

  const plugin = fp(async function tracing (fastify: FastifyInstance) {
    // A body parser's message quotes the body (a password, a token) and would become the span's status. Added first,
    // this runs before @fastify/otel's onError; plugins/app/errors.ts answers with fixed messages anyway.
    fastify.addHook('onError', async (_request, _reply, error) => {
      if (error instanceof SyntaxError || error.code?.startsWith('FST_ERR_CTP_') === true) {
        error.message = 'Malformed request body'
      }
    })
    await fastify.register(fastifyOtel.plugin())
    // The trace id on the request's later log lines; then the "incoming request" line (IncomingLoggedByTracing).
    fastify.addHook('onRequest', async (request, reply) => {
      const { span } = request.opentelemetry()
      if (span != null) {
        const { traceId, spanId } = span.spanContext()
        request.log = reply.log = request.log.child({ trace_id: traceId, span_id: spanId })
      }
      request.log.debug({ req: request }, 'incoming request')
    })
  }, { name: 'tracing' })

  return {
    plugin,
    logController: new IncomingLoggedByTracing(),
    async shutdown () {
      for (const instrumentation of instrumentations) instrumentation.disable()
      // A silent collector must not hold the exit past close-with-grace's delay (exit 1): late spans are given up.
      await Promise.race([provider.shutdown(), sleep(SHUTDOWN_BOUND_MS, undefined, { ref: false })])
    }
  }
}
