/**
 * OpenTelemetry traces, loaded only when config.ts's isTracingOn says so (server.ts imports this
 * module dynamically): a span per request with its route and status (@fastify/otel), child
 * spans for each PostgreSQL query and Redis command, exported over OTLP/HTTP. The standard
 * OTEL_* variables (service name, resource attributes, sampler, batch delays, headers) apply.
 *
 * Tokens travel in query strings and form bodies: no span holds a query string or a body. The
 * request span keeps the path only; pg's spans hold the statement with its placeholders, never
 * its values; ioredis's hold the command and its keys (a username, an address).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AccessLog } from './access-log.js'
import { redactUrl } from '../lib/auth/redact.js'
import { packageInfo } from '../lib/package-info.js'

const SHUTDOWN_BOUND_MS = 2000

export interface Tracing {
  /** Registered first in the app, so that it sees every route and hook. */
  plugin: FastifyPluginAsync
  /** The app's Fastify `logController`: the plugin writes the "incoming request" line itself. */
  logController: AccessLog
  /** Exports the spans still buffered, then stops. */
  shutdown: () => Promise<void>
}

/** The URL's path as a span may carry it: a token a client put there by mistake is redacted, as in the logs. */
const pathOf = (url: string): string => redactUrl(url.split('?', 1)[0] as string)

/**
 * Fastify writes "incoming request" (a `debug` line, plugins/access-log.ts) before the first hook, so
 * before the request has a span; with tracing on, the tracing plugin writes that line from its
 * hook instead, with the trace id. (A request refused before routing, such as a malformed URL,
 * then has only its "request completed".)
 */
class IncomingLoggedByTracing extends AccessLog {
  override incomingRequest (): void {}
}

/**
 * Starts the tracer provider and the pg and ioredis instrumentations. It must run before `pg`
 * and `ioredis` are loaded, and they must be loaded with `require` (lib/store/connect.ts,
 * plugins/login-throttle.ts), which the instrumentations hook without an ESM loader: both load
 * lazily, as the app opens its database and its Redis connection, after this has run.
 */
export function startTracing (): Tracing {
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override these.
    resource: resourceFromAttributes({ 'service.name': packageInfo.name, 'service.version': packageInfo.version })
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())]
  })
  // The global provider, W3C trace-context propagation (`traceparent`), and async context.
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
    // The span's error status takes the error's message, and a body parser's message quotes the
    // body (a password, a token) around the fault. Added first, this runs before @fastify/otel's
    // onError hook; plugins/errors.ts answers these errors with fixed messages of its own anyway.
    fastify.addHook('onError', async (_request, _reply, error) => {
      if (error instanceof SyntaxError || error.code?.startsWith('FST_ERR_CTP_') === true) error.message = 'Malformed request body'
    })
    await fastify.register(fastifyOtel.plugin())
    // The trace id on every log line of the request from here on, beside its reqId; then the
    // "incoming request" line that Fastify leaves to this hook (IncomingLoggedByTracing).
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
      // A collector that does not answer must not hold the exit past close-with-grace's delay
      // (which would exit 1): the spans still buffered after this bound are given up.
      await Promise.race([provider.shutdown(), sleep(SHUTDOWN_BOUND_MS, undefined, { ref: false })])
    }
  }
}
