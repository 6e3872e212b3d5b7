import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import formbody from '@fastify/formbody'
import underPressure from '@fastify/under-pressure'
import pino from 'pino'
import { type Config, trustProxyOption } from './config.js'
import { AccessLog } from './lib/http/access-log.js'
import { packageInfo } from './lib/package-info.js'
import type { Tracing } from './plugins/external/tracing.js'
import { redactUrl } from './lib/auth/redact.js'
import activity from './plugins/app/activity.js'
import redis from './plugins/app/redis.js'
import users from './plugins/app/users.js'
import nosniff from './plugins/app/nosniff.js'
import requestTimeout from './plugins/app/request-timeout.js'
import compression from './plugins/external/compression.js'
import drain from './plugins/app/drain.js'
import errors from './plugins/app/errors.js'
import { clientErrorHandler, frameworkErrors } from './lib/http/errors.js'
import unrouted from './plugins/app/unrouted.js'
import fairShare from './plugins/app/fair-share.js'
import health from './plugins/app/health.js'
import loginThrottle, { type LoginThrottleOptions } from './plugins/app/login-throttle.js'
import markdownRenderer, { type MarkdownRendererOptions } from './plugins/app/markdown-renderer.js'
import metrics from './plugins/app/metrics.js'
import openapi from './plugins/external/openapi.js'
import requestId, { requestIdOf } from './plugins/app/request-id.js'
import sessions from './plugins/app/sessions.js'
import database from './plugins/app/database.js'
import strictNumbers from './plugins/app/strict-numbers.js'
import tokens from './plugins/app/tokens.js'
import { validatorCompilers } from './lib/http/validator-compilers.js'
import login from './routes/api/auth/login.js'
import logout from './routes/api/auth/logout.js'
import refresh from './routes/api/auth/refresh.js'
import userList from './routes/api/user/list.js'
import suninfo from './routes/api/date/suninfo.js'
import markdownParse from './routes/api/markdown/parse.js'

export interface BuildOptions {
  /** Where log lines go; by default standard output, or nowhere when LOG_LEVEL is silent. */
  logStream?: NodeJS.WritableStream
  loginThrottle?: Partial<LoginThrottleOptions>
  fairShare?: { syncIntervalMs?: number }
  markdownRenderer?: MarkdownRendererOptions
  /** Event-loop delay (ms) past which requests answer 503; 0, off, for test processes that stall compiling. */
  maxEventLoopDelayMs?: number
  /** Registered first when tracing is on, so that it sees every route. */
  tracing?: Pick<Tracing, 'plugin' | 'logController'>
}

const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 1000
/** Log lines are written in batches of about this many bytes, or after LOG_FLUSH_MS, whichever comes first. */
const LOG_BATCH_BYTES = 4096
const LOG_FLUSH_MS = 100

function loggerOptions (config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    // pino's asynchronous destination: batched writes, not a blocking write each; what is left is written on exit.
    stream: stream ?? (config.LOG_LEVEL === 'silent'
      ? undefined
      : pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS })),
    serializers: {
    // Tokens travel in query strings: the URL is redacted. No headers: they carry the Authorization token.
      req: (request) => ({
        method: request.method,
        url: redactUrl(request.url),
        route: request.routeOptions.url,
        remoteAddress: request.ip
      }),
      res: (reply) => ({ statusCode: reply.statusCode })
    }
  }
}

/** The whole service, not listening: the server, the CLI and every test build it here. */
export async function buildApp (config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config, options.logStream),
    logController: options.tracing?.logController ?? new AccessLog(),
    bodyLimit: config.BODY_LIMIT,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // Requests on open connections still get real answers while closing (plugins/app/drain.ts closes those).
    return503OnClosing: false,
    // Longer than a balancer's idle keepalive (nginx: 60 s): the balancer, never the replica, closes an idle one.
    keepAliveTimeout: 75_000,
    // Node's part of REQUEST_TIMEOUT: headers that never finish (plugins/app/request-timeout.ts times bodies).
    requestTimeout: config.REQUEST_TIMEOUT * 1000,
    clientErrorHandler,
    frameworkErrors,
    // plugins/app/errors.ts refuses a missing Host itself, with the contract's body.
    // Node checks request timeouts on this period (30 s by default, which would double a short REQUEST_TIMEOUT).
    http: { requireHostHeader: false, connectionsCheckingInterval: 1000 },
    schemaController: validatorCompilers(),
    genReqId: requestIdOf
  }).withTypeProvider<TypeBoxTypeProvider>()

  // JSON is the only body type, but for the form-encoded auth routes below.
  app.removeContentTypeParser('text/plain')

  if (options.tracing !== undefined) await app.register(options.tracing.plugin)
  await app.register(requestId)
  await app.register(nosniff)
  await app.register(requestTimeout, { timeoutMs: config.REQUEST_TIMEOUT * 1000 })
  await app.register(errors)
  await app.register(unrouted)
  await app.register(strictNumbers)
  await app.register(drain, { delayMs: config.DRAIN_SECONDS * 1000 })
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
    retryAfter: 10
  })
  await app.register(database, { databaseUrl: config.DATABASE_URL })
  await app.register(users)
  await app.register(sessions, { refreshTtlSeconds: config.REFRESH_TOKEN_TTL })
  await app.register(tokens, {
    currentSecret: config.JWT_SECRET,
    previousSecrets: config.JWT_PREVIOUS_SECRETS,
    accessTtlSeconds: config.ACCESS_TOKEN_TTL
  })
  await app.register(activity)
  // Before the stores that use it (failed logins, the fair share), so that it closes after them.
  await app.register(redis, config.REDIS_URL !== undefined ? { url: config.REDIS_URL } : {})
  await app.register(loginThrottle, {
    maxFailuresPerUsername: config.LOGIN_MAX_FAILURES_PER_USER,
    maxFailuresPerAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
    windowSeconds: config.LOGIN_FAILURE_WINDOW,
    ...options.loginThrottle
  })
  await app.register(markdownRenderer, {
    features: {
      rawHtml: config.MARKDOWN_RAW_HTML,
      highlight: config.MARKDOWN_HIGHLIGHT === 'on',
      math: config.MARKDOWN_MATH === 'on'
    },
    ...options.markdownRenderer
  })
  // Before the routes: it limits each route that names `fairShare` in its config as it is added.
  await app.register(fairShare, {
    windowSeconds: config.RATE_LIMIT_WINDOW,
    requestsPerWindow: config.RATE_LIMIT_REQUESTS,
    markdownBytesPerWindow: config.RATE_LIMIT_MARKDOWN_BYTES,
    markdownRendersAtOnce: config.RATE_LIMIT_MARKDOWN_RENDERS,
    exempt: config.RATE_LIMIT_EXEMPT,
    bodyLimit: config.BODY_LIMIT,
    ...options.fairShare
  })
  await app.register(metrics)
  // Before the routes that opt in to it, whose onRoute it reads.
  await app.register(compression)
  await app.register(openapi, { version: packageInfo.version })
  await app.register(health)

  // Tokens and the directory are for their one client: no cache may keep them (sun answers are public).
  const noStore = (
    _request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: null, payload: unknown) => void
  ) => {
    reply.header('cache-control', 'no-store')
    done(null, payload)
  }
  await app.register(async function authRoutes (auth) {
    await auth.register(formbody)
    auth.addHook('onSend', noStore)
    await auth.register(login)
    await auth.register(refresh)
    await auth.register(logout)
  })
  await app.register(async function userRoutes (users) {
    users.addHook('onSend', noStore)
    await users.register(userList, { onlineWindowSeconds: config.ONLINE_WINDOW })
  })
  await app.register(suninfo)
  await app.register(markdownParse)

  return app
}
