import { PassThrough } from 'node:stream'
import t from 'tap'
import { build, buildUnready, stallEventLoop } from '../support/helper.js'
import { describeValidationError } from '../../lib/http/errors.js'

t.test('an unknown route answers 404 Not found with the error body', async (t) => {
  const app = await buildUnready(t)
  for (const [method, url] of [['GET', '/nope'], ['POST', '/api/user/list'], ['DELETE', '/api/auth/login']] as const) {
    const response = await app.inject({ method, url })
    t.equal(response.statusCode, 404, `${method} ${url}`)
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
    t.same(response.json(), { error: { code: 404, message: 'Not found' } })
  }
})

t.test('an unknown route answers 404 whatever its body', async (t) => {
  const app = await buildUnready(t, { BODY_LIMIT: '100' })
  const cases = [
    { method: 'POST' as const, url: '/nope', headers: { 'content-type': 'application/json' }, payload: '{x' },
    { method: 'PUT' as const, url: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ markdown: 'x'.repeat(500) }) },
    { method: 'OPTIONS' as const, url: '/api/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'hello' }
  ]
  for (const request of cases) {
    const response = await app.inject(request)
    t.equal(response.statusCode, 404, `${request.method} ${request.url}`)
    t.same(response.json(), { error: { code: 404, message: 'Not found' } })
  }
})

t.test('an unexpected failure answers 500 with no internal detail', async (t) => {
  const app = await buildUnready(t)
  app.get('/explode', async () => { throw new Error('SELECT secret FROM internals at line 42') })
  app.get('/explode-with-status', async () => { throw Object.assign(new Error('db password is hunter2'), { statusCode: 502 }) })
  for (const url of ['/explode', '/explode-with-status']) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 500, url)
    t.same(response.json(), { error: { code: 500, message: 'Internal server error' } })
    t.notMatch(response.body, /secret|hunter2|at line|stack/)
  }
})

t.test('a body over BODY_LIMIT answers 413 with the error body', async (t) => {
  const app = await buildUnready(t, { BODY_LIMIT: '100' })
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'a', password: 'x'.repeat(200) } })
  t.equal(response.statusCode, 413)
  t.same(response.json(), { error: { code: 413, message: 'Body too large' } })
})

t.test('a JSON body with prototype-poisoning keys is refused and harms nothing', async (t) => {
  const app = await buildUnready(t)
  const response = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { 'content-type': 'application/json' },
    payload: '{"username":"a","password":"b","__proto__":{"polluted":true}}'
  })
  t.equal(response.statusCode, 400)
  t.equal(response.json().error.code, 400)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('validation messages name the field', async (t) => {
  t.equal(describeValidationError([{ keyword: 'maximum', instancePath: '/latitude', schemaPath: '', params: {}, message: 'must be <= 90' }]), 'latitude must be <= 90')
  t.equal(describeValidationError([{ keyword: 'required', instancePath: '', schemaPath: '', params: { missingProperty: 'username' }, message: 'x' }]), 'username is required')
  t.equal(describeValidationError([{ keyword: 'type', instancePath: '', schemaPath: '', params: {}, message: 'must be object' }], 'body'), 'body must be object')
})

t.test('a malformed URL escape answers 400 with the error body', async (t) => {
  const app = await buildUnready(t)
  const response = await app.inject({ url: '/api/date/suninfo%zz?timestamp=0&latitude=0&longitude=0' })
  t.equal(response.statusCode, 400)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  t.same(response.json(), { error: { code: 400, message: 'Bad Request' } })
})

// test/logging.test.ts shows that an unexpected failure still logs an error with its stack.
t.test('a 503 for overload (under-pressure) logs one warning without a stack', async (t) => {
  const stream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)))
  const app = await build(t, { LOG_LEVEL: 'info' }, { logStream: stream, maxEventLoopDelayMs: 5 })
  await stallEventLoop(1500)
  const refused = await app.inject({ url: '/api/date/suninfo?timestamp=0&latitude=0&longitude=0' })
  t.equal(refused.statusCode, 503)
  const refusedLines = lines.filter((line) => line.reqId === refused.headers['x-request-id'] && (line.level as number) >= 40)
  t.equal(refusedLines.length, 1, 'one line')
  t.match(refusedLines[0], { level: 40, msg: 'request not served', statusCode: 503, reason: 'Overloaded' }, 'a warning')
  t.notMatch(JSON.stringify(refusedLines), /stack/, 'with no stack')
})

t.test('a 503 for a dependency away logs one warning that names it, without a stack', async (t) => {
  const stream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)))
  const app = await buildUnready(t, { LOG_LEVEL: 'info' }, { logStream: stream })
  app.get('/database-away', async () => { throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }) })
  const refused = await app.inject({ url: '/database-away' })
  t.equal(refused.statusCode, 503)
  t.same(refused.json(), { error: { code: 503, message: 'Service unavailable' } })
  const refusedLines = lines.filter((line) => line.reqId === refused.headers['x-request-id'] && (line.level as number) >= 40)
  t.equal(refusedLines.length, 1, 'one line')
  t.match(refusedLines[0], { level: 40, msg: 'request not served', statusCode: 503, reason: 'Dependency unavailable: ECONNREFUSED connect ECONNREFUSED 10.0.0.5:5432' }, 'a warning naming the failure')
  t.notMatch(JSON.stringify(refusedLines), /stack/, 'with no stack')
})
