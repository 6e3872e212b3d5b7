import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { inRepository } from './support/repository.js'
import { ConfigError, ConfigSchema, isTracingOn, loadConfig, readEnv, trustProxyOption } from '../config.js'

t.test('defaults are the contract\'s (CONTRACT C Configuration)', async (t) => {
  const env = readEnv({})
  t.match(env, {
    PORT: 3000,
    HOST: '127.0.0.1',
    DATABASE_URL: 'sqlite:data/meridian.db',
    ACCESS_TOKEN_TTL: 3600,
    REFRESH_TOKEN_TTL: 2592000,
    ONLINE_WINDOW: 300,
    BODY_LIMIT: 1048576,
    LOG_LEVEL: 'info',
    NODE_ENV: 'development',
    MARKDOWN_RAW_HTML: 'github',
    MARKDOWN_HIGHLIGHT: 'on',
    MARKDOWN_MATH: 'on'
  })
  t.equal(env.JWT_SECRET, undefined)
  t.equal(env.TRUST_PROXY, undefined)
  t.equal(env.REDIS_URL, undefined)
})

t.test('the fair share\'s defaults are the README\'s: 1,200 requests and four largest documents a minute, one render at once, nobody exempt', async (t) => {
  // A secret of its own: without one, loadConfig would keep a generated one beside the default database.
  const base = { JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'sqlite::memory:' }
  const config = loadConfig(base)
  t.match(config, { RATE_LIMIT_WINDOW: 60, RATE_LIMIT_REQUESTS: 1200, RATE_LIMIT_MARKDOWN_RENDERS: 1, RATE_LIMIT_MARKDOWN_BYTES: 4 * 1048576 })
  t.same(config.RATE_LIMIT_EXEMPT, [])
  t.equal(loadConfig({ ...base, BODY_LIMIT: '2000000' }).RATE_LIMIT_MARKDOWN_BYTES, 8_000_000, 'the Markdown bytes follow BODY_LIMIT unless set')
})

t.test('invalid configuration fails with one line naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ METRICS_PORT: '0' }, 'METRICS_PORT'],
    [{ ACCESS_TOKEN_TTL: '0' }, 'ACCESS_TOKEN_TTL'],
    [{ REFRESH_TOKEN_TTL: '1.5' }, 'REFRESH_TOKEN_TTL'],
    [{ ONLINE_WINDOW: '-3' }, 'ONLINE_WINDOW'],
    [{ BODY_LIMIT: 'lots' }, 'BODY_LIMIT'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ MARKDOWN_RAW_HTML: 'strip' }, 'MARKDOWN_RAW_HTML'],
    [{ MARKDOWN_HIGHLIGHT: 'yes' }, 'MARKDOWN_HIGHLIGHT'],
    [{ MARKDOWN_MATH: 'true' }, 'MARKDOWN_MATH'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ JWT_SECRET: 'x'.repeat(32), JWT_PREVIOUS_SECRETS: 'short' }, 'JWT_PREVIOUS_SECRETS'],
    [{ TRUST_PROXY: 'abc' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '-1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1,' }, 'TRUST_PROXY'],
    [{ DATABASE_URL: 'postgres://%', JWT_SECRET: 'x'.repeat(32) }, 'DATABASE_URL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [{ RATE_LIMIT_REQUESTS: '0' }, 'RATE_LIMIT_REQUESTS'],
    [{ RATE_LIMIT_WINDOW: 'a minute' }, 'RATE_LIMIT_WINDOW'],
    [{ RATE_LIMIT_MARKDOWN_RENDERS: '0' }, 'RATE_LIMIT_MARKDOWN_RENDERS'],
    [{ RATE_LIMIT_MARKDOWN_BYTES: '1000', BODY_LIMIT: '2000' }, 'RATE_LIMIT_MARKDOWN_BYTES'],
    [{ RATE_LIMIT_EXEMPT: '10.0.0.0/8, office' }, 'RATE_LIMIT_EXEMPT'],
    [{ RATE_LIMIT_EXEMPT: '10.0.0.0/40' }, 'RATE_LIMIT_EXEMPT']
  ]
  for (const [env, variable] of cases) {
    const error = t.throws(() => loadConfig(env), ConfigError, JSON.stringify(env)) as unknown as Error
    t.match(error.message, variable, JSON.stringify(env))
    t.notMatch(error.message, '\n', 'one line')
  }
})

t.test('a variable that takes one of a few words lists them', async (t) => {
  t.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), { message: 'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent' })
  t.throws(() => loadConfig({ NODE_ENV: 'prod' }), { message: 'Invalid configuration: NODE_ENV must be one of development, production, test' })
})

t.test('tracing is on when an OTLP endpoint is set, by OpenTelemetry\'s standard variables', async (t) => {
  const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
  const traces = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector:4318/v1/traces' }
  const cases: Array<[Record<string, string>, boolean]> = [
    [{}, false],
    [base, true],
    [traces, true],
    [{ ...base, ...traces }, true],
    [{ ...base, OTEL_SDK_DISABLED: 'true' }, false],
    [{ ...traces, OTEL_SDK_DISABLED: ' TRUE ' }, false],
    [{ ...base, OTEL_SDK_DISABLED: 'false' }, true],
    [{ ...base, OTEL_SDK_DISABLED: '1' }, true], // only "true" disables, as the specification reads
    [{ ...base, OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ ...base, OTEL_TRACES_EXPORTER: ' None' }, false],
    [{ ...traces, OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ ...traces, OTEL_TRACES_EXPORTER: 'console' }, true], // OTLP is the only exporter: other names change nothing
    [{ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, false], // no endpoint: off, as the issue asks
    // An empty variable is unset (the specification): it neither fails the start nor turns tracing on or off.
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_SDK_DISABLED: '', OTEL_TRACES_EXPORTER: '' }, true]
  ]
  for (const [env, on] of cases) t.equal(isTracingOn(readEnv(env)), on, JSON.stringify(env))
})

t.test('without JWT_SECRET a key is generated once beside the embedded database', async (t) => {
  const directory = t.testdir()
  const env = { DATABASE_URL: `sqlite:${join(directory, 'db', 'meridian.db')}` }
  const first = loadConfig(env)
  const second = loadConfig(env)
  t.ok(first.JWT_SECRET.length >= 32)
  t.equal(second.JWT_SECRET, first.JWT_SECRET, 'kept across starts')
  const file = join(directory, 'db', 'jwt-secret')
  t.ok(existsSync(file))
  t.equal(readFileSync(file, 'utf8'), first.JWT_SECRET)
  t.equal(statSync(file).mode & 0o077, 0, 'readable by the owner only')
  t.equal(loadConfig({ ...env, JWT_SECRET: 'y'.repeat(40) }).JWT_SECRET, 'y'.repeat(40), 'JWT_SECRET wins')
})

t.test('PostgreSQL needs an explicit JWT_SECRET (replicas must share it)', async (t) => {
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://localhost/meridian' }), { message: /JWT_SECRET/ })
})

t.test('TRUST_PROXY: hops, true, or addresses', async (t) => {
  t.equal(trustProxyOption(undefined), false)
  t.equal(trustProxyOption('true'), true)
  t.same(trustProxyOption('10.0.0.1, 10.0.0.0/8'), ['10.0.0.1', '10.0.0.0/8'])
  t.same(readEnv({ TRUST_PROXY: '10.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).TRUST_PROXY, '10.0.0.1, 10.0.0.0/8,::1,fd00::/8', 'addresses and ranges of both families are valid')
  const hops = trustProxyOption('1') as (address: string, hop: number) => boolean
  t.equal(hops('10.0.0.1', 0), true)
  t.equal(hops('10.0.0.1', 1), false)
})

t.test("the README's configuration table names every variable of config.ts, with config.ts's default (one home: the schema; the table is checked)", async (t) => {
  const readme = readFileSync(inRepository('README.md'), 'utf8')
  const rows = readme.split('\n').filter((line) => /^\| `[A-Z_]+`/.test(line)).map((line) => line.split(' | ').map((cell) => cell.replace(/^\| /, '')))
  const defaults = readEnv({}) as Record<string, unknown>
  const documented = new Set<string>()
  for (const [names = '', defaultCell = ''] of rows) {
    const variables = [...names.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]!)
    const literals = /^`[^`]*`(?: \/ `[^`]*`)*(?: \(|$)/.test(defaultCell) ? [...defaultCell.split(' (')[0]!.matchAll(/`([^`]*)`/g)].map((match) => match[1]!) : []
    variables.forEach((name, index) => {
      documented.add(name)
      // A default that names another variable (METRICS_HOST's `HOST`) is that variable's value, not a literal.
      if (literals[index] !== undefined && !/^[A-Z][A-Z_]+$/.test(literals[index])) t.equal(String(defaults[name]), literals[index], `${name}: the README's default is config.ts's`)
      else if (defaultCell.startsWith('unset')) t.equal(defaults[name], undefined, `${name}: unset by default`)
    })
  }
  // Read by OpenTelemetry's SDK itself; the table names the two endpoints and says what turns tracing off.
  const readByTheSdk = new Set(['OTEL_SDK_DISABLED', 'OTEL_TRACES_EXPORTER'])
  for (const name of Object.keys(ConfigSchema.properties)) {
    if (!readByTheSdk.has(name)) t.ok(documented.has(name) || readme.includes(`\`${name}\``), `${name} is in the README's table`)
  }
  for (const name of documented) t.ok(name in ConfigSchema.properties, `${name}, in the README's table, is a variable of config.ts`)
})
