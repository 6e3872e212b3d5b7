import { PassThrough } from 'node:stream'
import t from 'tap'
import { build } from '../support/helper.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('a request id is taken from x-request-id, echoed, and on every log line of its request', async (t) => {
  const stream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  stream.on('data', (chunk: Buffer) => { for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line)) })
  const app = await build(t, { LOG_LEVEL: 'debug' }, { logStream: stream })

  const id = 'balancer-4f1c.9:a_b'
  const sun = await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=91&longitude=0', headers: { 'x-request-id': id } })
  t.equal(sun.statusCode, 400)
  t.equal(sun.headers['x-request-id'], id, 'echoed on an error answer')
  const ofRequest = lines.filter((line) => line.reqId === id)
  t.ok(ofRequest.length >= 3, `the request's log lines (${ofRequest.length}) carry its id`)
  t.ok(ofRequest.some((line) => line.msg === 'incoming request') && ofRequest.some((line) => line.msg === 'request completed'))
  t.same(lines.filter((line) => line.reqId !== undefined && line.reqId !== id), [], 'no line of it carries another id')
})

t.test('an unusable id is replaced by a generated one; none sent, one is generated', async (t) => {
  const app = await build(t)
  for (const sent of ['', 'a'.repeat(129), 'two words', 'line\u0085break', 'x<script>']) {
    const response = await app.inject({ url: '/health/live', headers: { 'x-request-id': sent } })
    t.match(response.headers['x-request-id'], UUID, `${JSON.stringify(sent.slice(0, 20))} is replaced`)
  }
  const first = await app.inject({ url: '/no/such/route' })
  const second = await app.inject({ url: '/no/such/route' })
  t.equal(first.statusCode, 404)
  t.match(first.headers['x-request-id'], UUID, 'generated, on a 404 too')
  t.not(first.headers['x-request-id'], second.headers['x-request-id'], 'a new id per request')
  t.equal((await app.inject({ url: '/health/live', headers: { 'x-request-id': 'a'.repeat(128) } })).headers['x-request-id'], 'a'.repeat(128))
})

t.test('413 and 415 answers carry the id too', async (t) => {
  const app = await build(t, { BODY_LIMIT: '100' })
  const large = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: 'x'.repeat(200) }, headers: { 'x-request-id': 'big-1' } })
  t.same([large.statusCode, large.headers['x-request-id']], [413, 'big-1'])
  const text = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: 'x', headers: { 'content-type': 'text/plain', 'x-request-id': 'text-1' } })
  t.same([text.statusCode, text.headers['x-request-id']], [415, 'text-1'])
})
