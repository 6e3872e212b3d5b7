import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { freePort, httpRequest, Replica } from './cluster/harness.js'
import { runMeridian } from './support/meridian.js'
import { postgresDatabase, postgresSkip } from './support/postgres.js'
import { cliPath } from './support/repository.js'

const redisUrl = process.env.TEST_REDIS_URL
const skip = postgresSkip !== false ? postgresSkip : redisUrl === undefined ? 'tracing test skipped: set TEST_REDIS_URL' : false

interface Attribute { key: string, value: { stringValue?: string, intValue?: string | number } }
interface Span { traceId: string, spanId: string, parentSpanId?: string, name: string, attributes: Attribute[] }
interface Scoped { scope: { name: string }, spans: Span[] }
interface ExportRequest { resourceSpans: Array<{ scopeSpans: Scoped[] }> }
interface ReceivedSpan extends Span { scope: string }

const attribute = (span: Span, key: string): string | number | undefined => {
  const value = span.attributes.find((entry) => entry.key === key)?.value
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue))
}

/** An OTLP/HTTP receiver (the JSON encoding, which @opentelemetry/exporter-trace-otlp-http sends). */
async function otlpReceiver (t: Test): Promise<{ url: string, bodies: string[], spans: ReceivedSpan[] }> {
  const bodies: string[] = []
  const spans: ReceivedSpan[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      bodies.push(body)
      if (request.url === '/v1/traces') {
        for (const resource of (JSON.parse(body) as ExportRequest).resourceSpans) {
          for (const scoped of resource.scopeSpans) spans.push(...scoped.spans.map((span) => ({ ...span, scope: scoped.scope.name })))
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close(); server.closeAllConnections() })
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies, spans }
}

t.test('tracing: spans of a login, a list and a render with their database and Redis children, the trace id in the logs, no token anywhere', { skip }, async (t) => {
  const receiver = await otlpReceiver(t)
  const port = await freePort('127.0.0.1')
  const metricsPort = await freePort('127.0.0.1')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    DATABASE_URL: await postgresDatabase(t),
    REDIS_URL: redisUrl as string,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'debug', // "incoming request" is a debug line
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'meridian-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100'
  }
  const username = `tracer-${randomBytes(4).toString('hex')}`
  const password = 'a-password-of-the-tracing-test'
  t.equal((await runMeridian(['migrate'], env)).code, 0)
  t.equal((await runMeridian(['user', 'add', '--username', username], env, `${password}\n`)).code, 0)

  const server = spawn(process.execPath, [cliPath, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let logs = ''
  server.stdout.on('data', (chunk: Buffer) => { logs += chunk.toString() })
  server.stderr.on('data', (chunk: Buffer) => { logs += chunk.toString() })
  t.teardown(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM')
      await once(server, 'exit')
    }
  })
  const replica = { host: '127.0.0.1', port }
  const deadline = performance.now() + 90_000
  while ((await httpRequest(replica, '/health/ready', { agent: false }).catch(() => undefined))?.status !== 200) {
    if (performance.now() > deadline || server.exitCode !== null) throw new Error(`the server did not start:\n${logs}`)
    await sleep(100)
  }

  // A caller's trace: the login's span continues it.
  const callerTraceId = randomBytes(16).toString('hex')
  const callerSpanId = randomBytes(8).toString('hex')
  const login = await httpRequest(replica, '/api/auth/login', {
    agent: false,
    form: { username, password },
    headers: { traceparent: `00-${callerTraceId}-${callerSpanId}-01` }
  })
  t.equal(login.status, 200)
  const { access_token: accessToken, refresh_token: refreshToken } = login.json() as { access_token: string, refresh_token: string }
  const list = await httpRequest(replica, `/api/user/list?access_token=${encodeURIComponent(accessToken)}&per_page=5`, { agent: false })
  t.equal(list.status, 200)
  // A token in the path, where a client put it by mistake: the span's url.path carries the path.
  const misplaced = await httpRequest(replica, `/api/user/list/${accessToken}`, { agent: false })
  t.equal(misplaced.status, 404)
  const render = await httpRequest(replica, '/api/markdown/parse', { agent: false, json: { markdown: `*${accessToken}*` } })
  t.equal(render.status, 200)
  const refresh = await httpRequest(replica, '/api/auth/refresh', { agent: false, form: { refresh_token: refreshToken } })
  t.equal(refresh.status, 200)
  const renewed = refresh.json() as { access_token: string, refresh_token: string }
  // A malformed body: the parser's message quotes it, and that message must reach no span.
  const malformedSecret = 'x7-not-json'
  const malformed = await fetch(`http://${replica.host}:${replica.port}/api/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"password":${malformedSecret}}`
  })
  t.equal(malformed.status, 400)
  const metrics = await httpRequest({ host: '127.0.0.1', port: metricsPort }, '/metrics', { agent: false })

  // SIGTERM flushes what the batch still holds.
  server.kill('SIGTERM')
  await once(server, 'exit')

  const requestSpan = (route: string) => receiver.spans.find((span) => span.scope === '@fastify/otel' && attribute(span, 'http.route') === route && span.parentSpanId !== undefined && span.name.endsWith(route)) ??
    receiver.spans.find((span) => span.scope === '@fastify/otel' && attribute(span, 'http.route') === route && attribute(span, 'http.response.status_code') !== undefined)
  const childrenOf = (root: Span, scope: string) => receiver.spans.filter((span) => span.traceId === root.traceId && span.scope === scope)

  const loginSpan = requestSpan('/api/auth/login')
  const listSpan = requestSpan('/api/user/list')
  const renderSpan = requestSpan('/api/markdown/parse')
  if (loginSpan === undefined || listSpan === undefined || renderSpan === undefined) {
    t.fail(`missing request spans; received: ${JSON.stringify(receiver.spans.map((span) => [span.scope, span.name]))}\nlogs:\n${logs}`)
    return
  }
  t.equal(loginSpan.name, 'POST /api/auth/login')
  t.equal(attribute(loginSpan, 'http.response.status_code'), 200)
  t.equal(attribute(loginSpan, 'url.path'), '/api/auth/login')
  t.equal(loginSpan.traceId, callerTraceId, 'the login continues the caller\'s trace (traceparent)')
  t.equal(loginSpan.parentSpanId, callerSpanId)
  t.ok(childrenOf(loginSpan, '@opentelemetry/instrumentation-pg').length > 0, 'the login has PostgreSQL spans')
  t.ok(childrenOf(loginSpan, '@opentelemetry/instrumentation-ioredis').length > 0, 'the login has Redis spans')
  t.equal(attribute(listSpan, 'http.response.status_code'), 200)
  t.equal(attribute(listSpan, 'url.path'), '/api/user/list', 'the path, without its query')
  t.ok(childrenOf(listSpan, '@opentelemetry/instrumentation-pg').length > 0, 'the list has PostgreSQL spans')
  t.equal(attribute(renderSpan, 'http.response.status_code'), 200)
  t.not(listSpan.traceId, loginSpan.traceId, 'a request without traceparent starts a trace of its own')

  const logLines = logs.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
  for (const [answer, span] of [[login, loginSpan], [list, listSpan], [render, renderSpan]] as const) {
    const lines = logLines.filter((line) => line.reqId === answer.headers['x-request-id'])
    for (const message of ['incoming request', 'request completed']) {
      t.ok(lines.some((line) => line.msg === message && line.trace_id === span.traceId), `${span.name}: its "${message}" line carries its trace id beside its request id`)
    }
    t.ok(lines.length > 0 && lines.every((line) => line.trace_id === span.traceId), `${span.name}: so does every other line of it (${lines.length})`)
  }

  const exported = receiver.bodies.join('\n')
  for (const [name, token] of Object.entries({ accessToken, refreshToken, renewedAccess: renewed.access_token, renewedRefresh: renewed.refresh_token })) {
    t.notOk(exported.includes(token), `no exported span holds the ${name}`)
    t.notOk(logs.includes(token), `no log line holds the ${name}`)
    t.notOk(metrics.body.includes(token), `/metrics does not hold the ${name}`)
  }
  t.notOk(exported.includes(password) || logs.includes(password), 'nor the password')
  t.notOk(exported.includes(malformedSecret) || logs.includes(malformedSecret), 'nor a malformed body, quoted by its parser\'s message')
})

/**
 * Every module a `meridian serve` process loads, written to a file as it runs: ES modules through a
 * resolve hook (node:module's register), CommonJS ones from require.cache at exit.
 */
const MODULE_RECORDER_HOOKS = `
import { appendFileSync } from 'node:fs'
let file
export function initialize (data) { file = data.file }
export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(file, resolved.url + '\\n')
  return resolved
}`
const MODULE_RECORDER = `
import { register, createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'
const file = process.env.MODULES_FILE
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(MODULE_RECORDER_HOOKS)}), { data: { file } })
// require.cache is one object, whichever file a require is created for.
process.on('exit', () => { appendFileSync(file, Object.keys(createRequire(process.cwd() + '/').cache).join('\\n') + '\\n') })`

/** The modules `meridian serve` loaded while it started, rendered a document and stopped on SIGTERM. */
async function modulesLoadedByServe (t: Test, extraEnv: Record<string, string>): Promise<string[]> {
  const directory = t.testdir()
  const modulesFile = join(directory, 'modules.txt')
  const endpoint = { host: '127.0.0.1', port: await freePort('127.0.0.1') }
  const replica = new Replica(0, endpoint, {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(MODULE_RECORDER)}`,
    DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}`,
    HOST: endpoint.host,
    PORT: String(endpoint.port),
    LOG_LEVEL: 'warn',
    DRAIN_SECONDS: '0',
    MODULES_FILE: modulesFile,
    ...extraEnv
  }, join(directory, 'serve.log'), 30_000)
  t.teardown(async () => { if (replica.running) await replica.stop('SIGKILL') })
  await replica.start()
  const rendered = await httpRequest(endpoint, '/api/markdown/parse', { agent: false, json: { markdown: '# traced?' } })
  t.same(rendered.json(), { data: '<h1 id="user-content-traced">traced?</h1>\n' }, 'the server rendered a document')
  const exit = await replica.stop('SIGTERM')
  t.same([exit.code, exit.signal], [0, null], 'and exited on SIGTERM')
  return (await readFile(modulesFile, 'utf8')).split('\n').filter((line) => line !== '')
}

/**
 * OpenTelemetry's SDK, exporter and instrumentations, @fastify/otel, and plugins/external/tracing.js. Not
 * `@opentelemetry/api`: prom-client requires it whenever it loads (for exemplars, which this service
 * does not turn on), and with no SDK registered it is a no-op facade.
 */
const isTracingModule = (module: string): boolean =>
  /\/@opentelemetry\/(?!api\/)|\/@fastify\/otel\/|\/plugins\/external\/tracing\.js$/.test(module)

t.test('tracing off (no OTLP endpoint): meridian serve loads none of the tracing code', async (t) => {
  const modules = await modulesLoadedByServe(t, {})
  t.ok(modules.some((module) => module.endsWith('/dist/app.js')), `the recorder saw the app's modules (${modules.length} in all)`)
  t.same(modules.filter(isTracingModule), [], 'none of OpenTelemetry\'s SDK, exporter or instrumentations, @fastify/otel or plugins/external/tracing.js')
  // prom-client requires the API from CommonJS: seen only through require.cache, the recorder's other half.
  t.ok(modules.some((module) => module.includes('/node_modules/@opentelemetry/api/')), 'the recorder saw CommonJS modules too (prom-client\'s @opentelemetry/api)')
})

// Also the control of the tests that find no tracing code: the same recorder sees it loaded.
// OTEL_EXPORTER_OTLP_ENDPOINT alone turning tracing on is the spans test's setting (above) and
// config.test.ts's.
t.test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT turns tracing on and wins over OTEL_EXPORTER_OTLP_ENDPOINT: the render\'s span reaches it', async (t) => {
  const receiver = await otlpReceiver(t)
  const modules = await modulesLoadedByServe(t, {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    // Nobody listens there: spans sent to it would be lost.
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort('127.0.0.1')}`,
    OTEL_BSP_SCHEDULE_DELAY: '100'
  })
  const tracing = modules.filter(isTracingModule)
  t.ok(tracing.some((module) => module.includes('sdk-trace')), `the recorder saw ${tracing.length} modules of tracing loaded, the SDK among them`)
  t.ok(tracing.some((module) => module.endsWith('/plugins/external/tracing.js')), 'plugins/external/tracing.js among them')
  // The exporter flushed its batch as the server stopped on SIGTERM.
  t.ok(receiver.spans.some((span) => span.name === 'POST /api/markdown/parse'), `the render's span arrived (${receiver.spans.length} spans)`)
})

t.test('OTEL_SDK_DISABLED=true turns tracing off whatever the endpoint', async (t) => {
  const receiver = await otlpReceiver(t)
  const modules = await modulesLoadedByServe(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' })
  t.same(modules.filter(isTracingModule), [], 'none of the tracing code loaded')
  t.same(receiver.bodies, [], 'nothing sent')
})
