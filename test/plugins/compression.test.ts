import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { addUser, build, buildUnready, login } from '../support/helper.js'
import { README } from '../support/markdown-corpus.js'

const BOTH = { 'accept-encoding': 'gzip, deflate, br' }

t.test('large answers are compressed when the client accepts it; small ones and the sun\'s are not', async (t) => {
  const app = await build(t)
  const render = async (headers: Record<string, string> = {}) => await app.inject({ method: 'POST', url: '/api/markdown/parse', headers, payload: { markdown: README } })

  const plain = await render()
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: as it is')
  const br = await render(BOTH)
  t.equal(br.headers['content-encoding'], 'br', 'brotli when accepted')
  t.match(br.headers.vary, /accept-encoding/i)
  t.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body, 'the same answer, decompressed')
  t.ok(br.rawPayload.length < plain.rawPayload.length / 2, `${plain.rawPayload.length} bytes become ${br.rawPayload.length}`)
  const gzip = await render({ 'accept-encoding': 'gzip' })
  t.equal(gzip.headers['content-encoding'], 'gzip', 'gzip when only gzip is accepted')
  t.equal(gunzipSync(gzip.rawPayload).toString(), plain.body)
  t.equal((await render({ 'accept-encoding': 'identity' })).headers['content-encoding'], undefined)

  const small = await app.inject({ method: 'POST', url: '/api/markdown/parse', headers: BOTH, payload: { markdown: '*hi*' } })
  t.equal(small.headers['content-encoding'], undefined, 'under 1 KiB: as it is')
  t.same(small.json(), { data: '<p><em>hi</em></p>\n' })

  const sunUrl = '/api/date/suninfo?timestamp=1700000000&latitude=51.5&longitude=0'
  const sun = await app.inject({ url: sunUrl, headers: BOTH })
  t.equal(sun.headers['content-encoding'], undefined, 'the sun answer is never compressed')
  t.equal(sun.headers.etag, (await app.inject({ url: sunUrl })).headers.etag, 'so its ETag names one representation')
  t.equal((await app.inject({ url: sunUrl, headers: { ...BOTH, 'if-none-match': sun.headers.etag as string } })).statusCode, 304)

  await addUser(app, { username: 'zip', password: 'zip-password' })
  for (let i = 0; i < 30; i++) await addUser(app, { username: `user-${i}`, password: 'x-password' })
  const { access_token: token } = await login(app, 'zip', 'zip-password')
  const page = await app.inject({ url: `/api/user/list?per_page=50&access_token=${token}`, headers: BOTH })
  t.equal(page.headers['content-encoding'], 'br', 'a page of users')
  t.equal(page.headers['cache-control'], 'no-store')
  t.equal(JSON.parse(brotliDecompressSync(page.rawPayload).toString()).data.length, 31)

  const document = await app.inject({ url: '/openapi.json', headers: BOTH })
  t.equal(document.headers['content-encoding'], 'br', 'the OpenAPI document')
  t.match((await app.inject({ url: '/openapi.json' })).headers.vary, /accept-encoding/, 'whose uncompressed copy says it varies too')
})

t.test('a route that compresses nothing runs none of the compression\'s hooks', async (t) => {
  const app = await buildUnready(t)
  // @fastify/compress sets `reply.compress` in a hook of each route it touches.
  const compressFunctionOn = new Map<string, boolean>()
  app.addHook('onSend', (request, reply, payload, done) => {
    compressFunctionOn.set(request.routeOptions.url ?? '', typeof (reply as unknown as { compress?: unknown }).compress === 'function')
    done(null, payload)
  })
  await app.ready()
  await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=51.5&longitude=0' })
  await app.inject({ url: '/health/live' })
  await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: '*hi*' } })
  t.equal(compressFunctionOn.get('/api/date/suninfo'), false, 'the sun route')
  t.equal(compressFunctionOn.get('/health/live'), false, 'the health checks')
  t.equal(compressFunctionOn.get('/api/markdown/parse'), true, 'but the routes that compress')
})
