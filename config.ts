import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import envSchema from 'env-schema'
import { sqliteFileOf } from './lib/store/database-url.js'

export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development'
  }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.String({ pattern: '^(sqlite:.+|postgres(ql)?://.+)$', default: 'sqlite:data/meridian.db' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  /** Comma-separated secrets that still verify tokens (but never sign), for key rotation. */
  JWT_PREVIOUS_SECRETS: Type.Optional(Type.String()),
  ACCESS_TOKEN_TTL: Type.Integer({ minimum: 1, default: 3600 }),
  REFRESH_TOKEN_TTL: Type.Integer({ minimum: 1, default: 2592000 }),
  ONLINE_WINDOW: Type.Integer({ minimum: 1, default: 300 }),
  BODY_LIMIT: Type.Integer({ minimum: 1, default: 1048576 }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Fair share per client address in a sliding window of this many seconds (docs/decisions.md says why these). */
  RATE_LIMIT_WINDOW: Type.Integer({ minimum: 1, maximum: 86400, default: 60 }),
  RATE_LIMIT_REQUESTS: Type.Integer({ minimum: 1, default: 1200 }),
  /** Markdown bytes (declared Content-Length) per window; at least BODY_LIMIT, 4 × BODY_LIMIT by default. */
  RATE_LIMIT_MARKDOWN_BYTES: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Markdown documents large enough for a render thread that one client may have rendering at once, per replica. */
  RATE_LIMIT_MARKDOWN_RENDERS: Type.Integer({ minimum: 1, default: 1 }),
  /** Comma-separated addresses or CIDR ranges the fair-share limits never apply to (not the login throttle). */
  RATE_LIMIT_EXEMPT: Type.String({ default: '' }),
  /** Failed logins per username and per address in LOGIN_FAILURE_WINDOW s; users behind one NAT share its address. */
  LOGIN_MAX_FAILURES_PER_USER: Type.Integer({ minimum: 1, default: 5 }),
  LOGIN_MAX_FAILURES_PER_ADDRESS: Type.Integer({ minimum: 1, default: 20 }),
  LOGIN_FAILURE_WINDOW: Type.Integer({ minimum: 1, maximum: 86400, default: 900 }),
  /** Seconds a client has to send a whole request, headers and body; past it, 408 and the connection closed. */
  REQUEST_TIMEOUT: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  /** Raw HTML in Markdown: `github`, through GitHub's allowlist; `escape`, every tag shown as text. */
  MARKDOWN_RAW_HTML: Type.Union([Type.Literal('github'), Type.Literal('escape')], { default: 'github' }),
  /** Fenced code with a known language highlighted on the server (lib/markdown/code-highlight.ts). */
  MARKDOWN_HIGHLIGHT: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  /** `$…$`, `$$…$$` and ```math fences rendered as MathML (lib/markdown/math.ts); off, they stay text. */
  MARKDOWN_MATH: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  /** Port of the Prometheus metrics listener; unset, no metrics are served. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  /** Seconds a replica keeps serving after SIGTERM, readiness answering 503, before it stops accepting. */
  DRAIN_SECONDS: Type.Integer({ minimum: 0, maximum: 300, default: 5 }),
  /** A collector's base URL for OTLP over HTTP (the exporter adds /v1/traces); the traces URL below wins. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** OpenTelemetry's switch: `true` (any case) turns tracing off whatever the endpoints say. */
  OTEL_SDK_DISABLED: Type.Optional(Type.String()),
  /** `none` (any case) turns tracing off; OTLP is the only exporter here, so other values change nothing. */
  OTEL_TRACES_EXPORTER: Type.Optional(Type.String()),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' }
  )
})

export type Env = Static<typeof ConfigSchema>

/** An OTLP endpoint is set and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER turns tracing off. */
export function isTracingOn (env: Pick<Env, Extract<keyof Env, `OTEL_${string}`>>): boolean {
  const says = (value: string | undefined, word: string): boolean => value?.trim().toLowerCase() === word
  if (says(env.OTEL_SDK_DISABLED, 'true') || says(env.OTEL_TRACES_EXPORTER, 'none')) return false
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined || env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined
}

export type Config = Omit<
  Env,
  'JWT_SECRET' | 'JWT_PREVIOUS_SECRETS' | 'RATE_LIMIT_EXEMPT' | 'RATE_LIMIT_MARKDOWN_BYTES'
> & {
  JWT_SECRET: string
  JWT_PREVIOUS_SECRETS: string[]
  RATE_LIMIT_EXEMPT: string[]
  RATE_LIMIT_MARKDOWN_BYTES: number
}

/** RATE_LIMIT_MARKDOWN_BYTES's default, in documents of BODY_LIMIT bytes. */
const DEFAULT_MARKDOWN_DOCUMENTS_PER_WINDOW = 4

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Throws a ConfigError whose message is one line naming the first bad variable. */
export function readEnv (source: NodeJS.ProcessEnv = process.env): Env {
  let env: Env
  try {
    env = envSchema<Env>({ schema: ConfigSchema, data: withoutEmptyOpenTelemetryVariables(source), dotenv: false })
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${firstSchemaError(error)}`)
  }
  if (env.NODE_ENV === 'production' && env.JWT_SECRET === undefined) {
    throw new ConfigError('Invalid configuration: JWT_SECRET is required when NODE_ENV=production')
  }
  trustProxyOption(env.TRUST_PROXY) // throws a ConfigError naming TRUST_PROXY for a value Fastify could not use
  if (!env.DATABASE_URL.startsWith('sqlite:') && !isPostgresUrl(env.DATABASE_URL)) {
    throw new ConfigError('Invalid configuration: DATABASE_URL is not a valid postgres:// URL')
  }
  rateLimitExemptions(env) // throws a ConfigError naming RATE_LIMIT_EXEMPT for an entry that is no address or range
  if (env.RATE_LIMIT_MARKDOWN_BYTES !== undefined && env.RATE_LIMIT_MARKDOWN_BYTES < env.BODY_LIMIT) {
    // Otherwise a document of the largest size the service takes could never be rendered.
    throw new ConfigError('Invalid configuration: RATE_LIMIT_MARKDOWN_BYTES must be at least BODY_LIMIT')
  }
  return env
}

interface SchemaError { instancePath: string, keyword: string, params: { allowedValue?: unknown } }

/** One line; a choice of literals (LOG_LEVEL) lists its values, where Ajv says "must be equal to constant". */
function firstSchemaError (error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const errors = (error as { errors?: SchemaError[] }).errors ?? []
  const first = errors[0]
  if (first !== undefined && first.keyword === 'const') {
    const allowed = errors
      .filter((other) => other.instancePath === first.instancePath && other.keyword === 'const')
      .map((other) => String(other.params.allowedValue))
    return `${first.instancePath.slice(1)} must be one of ${allowed.join(', ')}`
  }
  return message.replace(/^env\/?/, '').split(', ')[0] ?? message
}

/** OpenTelemetry's specification reads an empty OTEL_* variable as unset. */
function withoutEmptyOpenTelemetryVariables (source: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(source).filter(([name, value]) => !(name.startsWith('OTEL_') && value === ''))
  )
}

/** What pg's connection-string parser will take: a URL whose escapes decode. */
function isPostgresUrl (value: string): boolean {
  try {
    decodeURIComponent(value)
    return URL.canParse(value)
  } catch {
    return false
  }
}

function isAddressOrRange (entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

export function previousSecrets (env: Env): string[] {
  const secrets = (env.JWT_PREVIOUS_SECRETS ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  const short = secrets.find((s) => s.length < 32)
  if (short !== undefined) {
    throw new ConfigError('Invalid configuration: JWT_PREVIOUS_SECRETS entries must be at least 32 characters')
  }
  return secrets
}

/** RATE_LIMIT_EXEMPT's addresses and CIDR ranges; a ConfigError for anything else. */
export function rateLimitExemptions (env: Pick<Env, 'RATE_LIMIT_EXEMPT'>): string[] {
  const entries = env.RATE_LIMIT_EXEMPT.split(',').map((entry) => entry.trim()).filter(Boolean)
  if (!entries.every(isAddressOrRange)) {
    throw new ConfigError(
      'Invalid configuration: RATE_LIMIT_EXEMPT must be comma-separated IP addresses or CIDR ranges'
    )
  }
  return entries
}

/** Fastify's `trustProxy` from TRUST_PROXY: a hop count, `true`, or addresses/CIDRs; a ConfigError otherwise. */
export function trustProxyOption (
  value: string | undefined
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === undefined) return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  const entries = value.split(',').map((entry) => entry.trim())
  if (!entries.every(isAddressOrRange)) {
    throw new ConfigError('Invalid configuration: TRUST_PROXY must be a hop count, true, ' +
      'or comma-separated IP addresses or CIDR ranges')
  }
  return entries
}

/** The embedded database keeps its own signing key beside it, made on first start. */
function embeddedSecretFile (sqliteFile: string): string {
  return join(dirname(sqliteFile), 'jwt-secret')
}

function readOrCreateSecret (file: string): string {
  mkdirSync(dirname(file), { recursive: true })
  try {
    // 'wx': if the server and the CLI start together, one creates the key and both read it.
    writeFileSync(file, randomBytes(48).toString('base64url'), { flag: 'wx', mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const secret = readFileSync(file, 'utf8').trim()
  if (secret.length < 32) throw new ConfigError(`Invalid configuration: ${file} holds a key shorter than 32 characters`)
  return secret
}

export function loadConfig (source: NodeJS.ProcessEnv = process.env): Config {
  const env = readEnv(source)
  let secret = env.JWT_SECRET
  if (secret === undefined) {
    const sqliteFile = sqliteFileOf(env.DATABASE_URL)
    if (sqliteFile === undefined) {
      throw new ConfigError('Invalid configuration: JWT_SECRET is required with a PostgreSQL DATABASE_URL')
    }
    secret = readOrCreateSecret(embeddedSecretFile(sqliteFile))
  }
  return {
    ...env,
    JWT_SECRET: secret,
    JWT_PREVIOUS_SECRETS: previousSecrets(env),
    RATE_LIMIT_EXEMPT: rateLimitExemptions(env),
    RATE_LIMIT_MARKDOWN_BYTES: env.RATE_LIMIT_MARKDOWN_BYTES ?? DEFAULT_MARKDOWN_DOCUMENTS_PER_WINDOW * env.BODY_LIMIT
  }
}
