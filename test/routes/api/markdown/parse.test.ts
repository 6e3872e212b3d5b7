import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../../../support/helper.js'
import { MAX_MARKDOWN_LENGTH } from '../../../../lib/markdown/render.js'

const URL = '/api/markdown/parse'

interface ErrorBody { error: { code: number, message: string } }

/** The contract's error body, with a code equal to the status. */
function assertErrorBody (t: Test, response: { statusCode: number, headers: Record<string, unknown>, body: string }, status: number, message?: RegExp): void {
  t.equal(response.statusCode, status, `status ${status}`)
  t.match(String(response.headers['content-type']), /^application\/json; charset=utf-8/)
  const body = JSON.parse(response.body) as ErrorBody
  t.same(Object.keys(body), ['error'])
  t.same(Object.keys(body.error).sort(), ['code', 'message'])
  t.equal(body.error.code, status, 'code equals the status')
  t.type(body.error.message, 'string')
  if (message !== undefined) t.match(body.error.message, message)
  t.notMatch(body.error.message, /at .*\.(js|ts):\d+|Unexpected token|FST_/, 'no internal detail')
}

/** POSTs the body as it is, with the given Content-Type (none for null). */
async function post (app: FastifyInstance, payload: string, contentType: string | null = 'application/json') {
  return await app.inject({
    method: 'POST',
    url: URL,
    headers: contentType === null ? {} : { 'content-type': contentType },
    payload
  })
}

t.test('renders Markdown to HTML', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'POST', url: URL, payload: { markdown: '# Title\n\nSome *emphasis* and `code`.' } })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json; charset=utf-8/)
  t.same(response.json(), { data: '<h1 id="user-content-title">Title</h1>\n<p>Some <em>emphasis</em> and <code>code</code>.</p>\n' })
})

t.test('an empty source renders to an empty string', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'POST', url: URL, payload: { markdown: '' } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { data: '' })
})

t.test('raw HTML as GitHub renders it, dangerous links as text; all raw HTML as text with MARKDOWN_RAW_HTML=escape', async (t) => {
  const markdown = '<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>'
  const github = await build(t)
  const kept = await github.inject({ method: 'POST', url: URL, payload: { markdown } })
  t.equal(kept.statusCode, 200)
  t.same(kept.json(), { data: '&lt;script>alert(1)&lt;/script>\n<p>[x](javascript:alert(1)) <img src="x" /></p>\n' },
    'the tagfilter shows the script as text; the image stays, its handler dropped')
  const escape = await build(t, { MARKDOWN_RAW_HTML: 'escape' })
  const escaped = await escape.inject({ method: 'POST', url: URL, payload: { markdown } })
  t.equal(escaped.statusCode, 200)
  t.same(escaped.json(), {
    data: '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n' +
      '<p>[x](javascript:alert(1)) &lt;img src=x onerror=alert(1)&gt;</p>\n'
  })
})

t.test('extra body fields are ignored', async (t) => {
  const app = await build(t)
  const response = await post(app, JSON.stringify({ markdown: '*a*', theme: 'dark' }))
  t.equal(response.statusCode, 200)
  t.same(response.json(), { data: '<p><em>a</em></p>\n' })
})

t.test('a missing or non-string markdown answers 400 naming the field', async (t) => {
  const app = await build(t)
  const bodies: Record<string, string> = {
    'no field': '{}',
    'a number': '{"markdown":5}',
    'a boolean': '{"markdown":true}',
    null: '{"markdown":null}',
    'an array': '{"markdown":["a"]}',
    'an object': '{"markdown":{"text":"a"}}',
    'the field misspelt': '{"Markdown":"a"}',
    'a JSON string': '"# a"',
    'a JSON array': '[{"markdown":"a"}]',
    'JSON null': 'null',
    'a JSON number': '42'
  }
  for (const [name, body] of Object.entries(bodies)) {
    await t.test(name, async (t) => {
      assertErrorBody(t, await post(app, body), 400, /markdown|body/)
    })
  }
})

t.test('a body that is not JSON answers 415', async (t) => {
  const app = await build(t)
  const types = [
    'text/plain',
    'text/markdown',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonp',
    'application/octet-stream'
  ]
  for (const type of types) {
    await t.test(type, async (t) => {
      assertErrorBody(t, await post(app, type.startsWith('application/x-www') ? 'markdown=a' : '{"markdown":"a"}', type), 415)
    })
  }
  await t.test('no content type', async (t) => {
    assertErrorBody(t, await post(app, '{"markdown":"a"}', null), 415)
  })
})

t.test('JSON with a charset parameter is JSON', async (t) => {
  const app = await build(t)
  const response = await post(app, '{"markdown":"a"}', 'application/json; charset=utf-8')
  t.equal(response.statusCode, 200)
  t.same(response.json(), { data: '<p>a</p>\n' })
})

t.test('malformed JSON answers 400', async (t) => {
  const app = await build(t)
  const bodies = ['{"markdown":', '{markdown:"a"}', '{"markdown":"a"', "{'markdown':'a'}", '{"markdown":"\\x"}', '', ' ', '\u0000']
  for (const body of bodies) {
    await t.test(JSON.stringify(body), async (t) => {
      assertErrorBody(t, await post(app, body), 400)
    })
  }
})

t.test('a body over BODY_LIMIT answers 413', async (t) => {
  await t.test('the default limit, 1 MiB', async (t) => {
    const app = await build(t)
    const fits = JSON.stringify({ markdown: 'a'.repeat(1024 * 1024 - 20) })
    t.equal((await post(app, fits)).statusCode, 200, 'just under the limit renders')
    assertErrorBody(t, await post(app, JSON.stringify({ markdown: 'a'.repeat(1024 * 1024) })), 413)
  })
  await t.test('a configured limit', async (t) => {
    const app = await build(t, { BODY_LIMIT: '100' })
    t.equal((await post(app, JSON.stringify({ markdown: 'a'.repeat(50) }))).statusCode, 200)
    assertErrorBody(t, await post(app, JSON.stringify({ markdown: 'a'.repeat(200) })), 413)
    assertErrorBody(t, await post(app, 'x'.repeat(200), 'text/plain'), 415)
  })
})

t.test('with a BODY_LIMIT raised past it, the renderer still takes at most MAX_MARKDOWN_LENGTH characters', async (t) => {
  const app = await build(t, { BODY_LIMIT: String(4 * MAX_MARKDOWN_LENGTH) })
  t.equal((await post(app, JSON.stringify({ markdown: 'a'.repeat(MAX_MARKDOWN_LENGTH) }))).statusCode, 200)
  assertErrorBody(t, await post(app, JSON.stringify({ markdown: 'a'.repeat(MAX_MARKDOWN_LENGTH + 1) })), 400, /^markdown /)
})

t.test('the length limit counts characters, not UTF-16 units: an emoji is one', async (t) => {
  const app = await build(t, { BODY_LIMIT: String(5 * MAX_MARKDOWN_LENGTH) })
  t.equal((await post(app, JSON.stringify({ markdown: '😀'.repeat(MAX_MARKDOWN_LENGTH) }))).statusCode, 200)
  assertErrorBody(t, await post(app, JSON.stringify({ markdown: '😀'.repeat(MAX_MARKDOWN_LENGTH + 1) })), 400,
    new RegExp(`^markdown must NOT have more than ${MAX_MARKDOWN_LENGTH} characters$`))
})

t.test('prototype-pollution keys do no harm', async (t) => {
  const app = await build(t)
  const bodies = [
    '{"markdown":"a","__proto__":{"polluted":"yes"}}',
    '{"markdown":"a","constructor":{"prototype":{"polluted":"yes"}}}',
    '{"__proto__":{"markdown":"from the prototype"}}'
  ]
  for (const body of bodies) {
    const response = await post(app, body)
    if (response.statusCode === 200) t.same(response.json(), { data: '<p>a</p>\n' }, body)
    else assertErrorBody(t, response, 400)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')

  const labels = await app.inject({
    method: 'POST',
    url: URL,
    payload: { markdown: '[__proto__] [constructor] [hasOwnProperty] [toString]\n\n[__proto__]: /p\n[constructor]: /c' }
  })
  t.equal(labels.statusCode, 200)
  t.same(labels.json(), {
    data: '<p><a href="/p"><strong>proto</strong></a> <a href="/c">constructor</a> [hasOwnProperty] [toString]</p>\n'
  }, 'reference labels named like Object members are ordinary labels')
})

t.test('the OpenAPI document describes the route', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const operation = response.json().paths?.[URL]?.post
  t.ok(operation, 'the route is documented')
  t.same(Object.keys(operation.responses).sort(), ['200', '400', '408', '413', '415', '429', '500', '503'])
})

/** Raw bytes to a listening server; resolves with everything it answered. */
async function rawExchange (port: number, bytes: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => { socket.end(bytes) })
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { answer += chunk })
    socket.on('end', () => { resolve(answer) })
    socket.on('close', () => { resolve(answer) })
    socket.on('error', reject)
    socket.setTimeout(5000, () => { socket.destroy(new Error('no answer')) })
  })
}

async function postOverHttp (port: number, body: string, contentType = 'application/json'): Promise<{ statusCode: number, headers: Record<string, unknown>, body: string }> {
  return await new Promise((resolve, reject) => {
    const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: URL, headers: { 'content-type': contentType } }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => { resolve({ statusCode: response.statusCode ?? 0, headers: response.headers, body: text }) })
    })
    request.on('error', reject)
    request.end(body)
  })
}

t.test('over a real socket, malformed requests get the error body and the server stays up', async (t) => {
  const app = await build(t, { BODY_LIMIT: '4096' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0

  assertErrorBody(t, await postOverHttp(port, '{"markdown":'), 400)
  assertErrorBody(t, await postOverHttp(port, 'a', 'text/plain'), 415)
  assertErrorBody(t, await postOverHttp(port, JSON.stringify({ markdown: 'a'.repeat(10_000) })), 413)

  const declaredTooLarge = await rawExchange(port,
    `POST ${URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999\r\nConnection: close\r\n\r\n{"markdown":"a"}`)
  t.match(declaredTooLarge, /^HTTP\/1\.1 413 /, 'a Content-Length over the limit is refused before reading')
  t.match(declaredTooLarge, /\{"error":\{"code":413,"message":"[^"]+"\}\}/)

  const shortBody = await rawExchange(port,
    `POST ${URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\nConnection: close\r\n\r\n{"markdown":"a"}`)
  t.notMatch(shortBody, /^HTTP\/1\.1 2/, 'a body shorter than its Content-Length is not rendered')

  // Requests Node's HTTP parser refuses before Fastify routes them.
  const unparsable: Record<string, string> = {
    'broken chunked encoding': `POST ${URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{"markdown":"a"}\r\n0\r\n\r\n`,
    'a Content-Length that is not a number': `POST ${URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}`,
    'a request line that is not HTTP': 'GARBAGE\r\n\r\n'
  }
  for (const [name, bytes] of Object.entries(unparsable)) {
    const answer = await rawExchange(port, bytes)
    t.match(answer, /^HTTP\/1\.1 400 /, `${name}: 400`)
    t.match(answer, /\r\n\r\n\{"error":\{"code":400,"message":"[^"]+"\}\}$/, `${name}: the contract's error body`)
    t.match(answer, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i, `${name}: the contract's content type`)
    t.match(answer, /\r\nX-Content-Type-Options: nosniff\r\n/i, `${name}: nosniff`)
  }

  const response = await postOverHttp(port, JSON.stringify({ markdown: '**still up**' }))
  t.equal(response.statusCode, 200)
  t.same(JSON.parse(response.body), { data: '<p><strong>still up</strong></p>\n' })
})
