import { PassThrough } from 'node:stream'
import t from 'tap'
import { addUser, build, buildUnready } from './support/helper.js'
import { sessionIdOf } from './support/forge.js'

t.test('no token or password reaches the logs at any level', async (t) => {
  const stream = new PassThrough()
  const lines: string[] = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)))
  const app = await build(t, { LOG_LEVEL: 'trace' }, { logStream: stream })
  const password = 'correct-horse-battery-staple'
  await addUser(app, { username: 'ada', password })

  const loginResponse = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password } })
  const { access_token: access, refresh_token: refresh } = loginResponse.json()
  const formLogin = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `username=ada&password=${password}`
  })
  const refreshed = (await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: refresh } })).json().access_token
  await app.inject({ url: `/api/user/list?access_token=${access}&page=1` })
  await app.inject({ url: `/api/user/list?page=0&access_token=${refreshed}` })
  await app.inject({ url: `/api/user/list?access_token=${refresh}` })
  await app.inject({ url: `/api/user/list?access_token=${access}x` })
  await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: `${password}-wrong` } })
  await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: `${refresh}x` } })
  await app.inject({ url: '/api/user/list', headers: { authorization: `Bearer ${access}` } })
  // Form bodies, and bodies the parsers refuse: a parser's message quotes the text around the fault.
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  await app.inject({ method: 'POST', url: '/api/auth/refresh', headers: form, payload: `refresh_token=${refresh}` })
  await app.inject({ method: 'POST', url: '/api/auth/refresh', headers: form, payload: `refresh_token=${refresh}%ZZ` })
  await app.inject({ method: 'POST', url: '/api/auth/login', headers: form, payload: `username=ada&password=${password}%` })
  await app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: `{"username":"ada","password":"${password}"` })
  await app.inject({ method: 'POST', url: '/api/auth/refresh', headers: { 'content-type': 'application/json' }, payload: `{"refresh_token":"${refresh}",}` })
  await app.inject({ method: 'POST', url: '/api/auth/logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `refresh_token=${refresh}` })
  // Tokens where clients put them by mistake: the path, a path parameter, a parameter's name with its `=` encoded, dots encoded.
  for (const token of [access, refresh]) {
    await app.inject({ url: `/api/user/list;access_token=${token}` })
    await app.inject({ url: `/api/user/list/${token}` })
    await app.inject({ url: `/api/user/list?access_token%3D${token}` })
    await app.inject({ url: `/api/user/list?page=1&q=${token}` })
    await app.inject({ url: `/api/user/list?access_token=${(token as string).replaceAll('.', '%2E')}` })
    await app.inject({ url: `/api/nothing-here/${token}` })
    // Every character percent-encoded (#59): a value, a name, a path segment.
    const encoded = [...(token as string)].map((character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`).join('')
    await app.inject({ url: `/api/user/list?q=${encoded}` })
    await app.inject({ url: `/api/user/list?${encoded}=1` })
    await app.inject({ url: `/api/user/${encoded}` })
  }
  await app.inject({ url: `/api/user/list?access_token=${access}` })
  await app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: refresh } })
  await app.close()

  t.equal(formLogin.statusCode, 200)
  t.ok(lines.length > 20, `captured ${lines.length} log lines`)
  t.ok(lines.some((line) => line.includes('access_token=[REDACTED]')), 'request URLs are logged, redacted')
  const log = lines.join('\n')
  const secrets = {
    password,
    access,
    refresh,
    refreshed,
    signature: (access as string).split('.')[2],
    'session id': sessionIdOf(refresh),
    'refresh signature': (refresh as string).split('.')[2],
    'access payload': (access as string).split('.')[1]
  }
  // As a reader would decode it (twice, so an escape encoded again is read too).
  const decode = (text: string): string => { try { return decodeURIComponent(text) } catch { return text } }
  const decodedLog = lines.map((line) => decode(decode(line))).join('\n')
  for (const [name, secret] of Object.entries(secrets)) {
    t.notOk(log.includes(secret) || decodedLog.includes(secret), `${name} is not in the logs, decoded or not`)
  }
})

t.test('a deliberate 503 (a replica draining) logs a warning without a stack; an unexpected failure an error with one', async (t) => {
  const stream = new PassThrough()
  const lines: Array<{ level: number, msg: string, err?: { stack?: string } }> = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line))))
  const app = await buildUnready(t, { LOG_LEVEL: 'info', DRAIN_SECONDS: '0' }, { logStream: stream })
  app.get('/test/boom', async () => { throw new Error('boom') })
  await app.ready()
  await app.drain()
  t.equal((await app.inject({ url: '/health/ready' })).statusCode, 503)
  t.equal((await app.inject({ url: '/test/boom' })).statusCode, 500)
  const notServed = lines.find((line) => line.msg === 'request not served')
  t.match(notServed, { level: 40, reason: 'Shutting down' })
  t.equal(notServed?.err, undefined)
  t.match(lines.find((line) => line.msg === 'request failed'), { level: 50, err: { stack: /boom/ } })
})

t.test('at info, one access line a request, written when the answer is sent: method, redacted URL, route, status, time, id', async (t) => {
  const stream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)))
  const app = await build(t, { LOG_LEVEL: 'info' }, { logStream: stream })
  const requests = [
    { url: '/api/date/suninfo?timestamp=1700000000&latitude=48.85&longitude=2.35', route: '/api/date/suninfo', status: 200 },
    { url: '/api/user/list?access_token=not-a-token', route: '/api/user/list', status: 403 },
    { url: '/no/such/route', route: undefined, status: 404 }
  ]
  for (const [i, { url }] of requests.entries()) await app.inject({ url, headers: { 'x-request-id': `access-${i}` } })
  await app.close()
  for (const [i, { url, route, status }] of requests.entries()) {
    const ofRequest = lines.filter((line) => line.reqId === `access-${i}`)
    const completed = ofRequest.filter((line) => line.msg === 'request completed')
    t.equal(completed.length, 1, `${url}: one "request completed" line`)
    t.match(completed[0], {
      level: 30,
      req: { method: 'GET', url: url.replace('not-a-token', '[REDACTED]'), ...(route !== undefined ? { route } : {}) },
      res: { statusCode: status },
      responseTime: Number
    })
    t.notOk(ofRequest.some((line) => line.msg === 'incoming request'), `${url}: "incoming request" is debug detail`)
  }
})
