import { once } from 'node:events'
import { connect } from 'node:net'
import t from 'tap'
import { build } from '../support/helper.js'

t.test('a request sent too slowly is answered 408 with the error body and its connection closed, after REQUEST_TIMEOUT', async (t) => {
  const app = await build(t, { REQUEST_TIMEOUT: '1' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const started = performance.now()
  // A body promised but sent a byte at a time, never finished: a slow client, or one holding connections on purpose.
  socket.write('POST /api/markdown/parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"markdown":')
  const trickle = setInterval(() => { if (socket.writable) socket.write(' ') }, 200)
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  socket.on('error', () => {})
  await once(socket, 'close')
  clearInterval(trickle)
  const ms = performance.now() - started
  t.match(answer, /^HTTP\/1\.1 408 /, '408')
  t.match(answer, '{"error":{"code":408,"message":"Request Timeout"}}', 'with the error body')
  t.match(answer.toLowerCase(), 'x-content-type-options: nosniff')
  t.ok(ms >= 900 && ms < 3500, `after about REQUEST_TIMEOUT (${ms.toFixed(0)} ms), though bytes kept coming`)
})

t.test('a client that stalls the rest of a body already answered (413 before reading) loses its connection, and nothing throws', async (t) => {
  const app = await build(t, { REQUEST_TIMEOUT: '1', BODY_LIMIT: '100' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('POST /api/markdown/parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"markdown":')
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  socket.on('error', () => {})
  const started = performance.now()
  await once(socket, 'close')
  t.match(answer, /^HTTP\/1\.1 413 /, 'answered 413 at once')
  t.ok(performance.now() - started < 3500, 'and the stalled connection closed by the timeout')
  const after = await app.inject({ url: '/health/live' })
  t.equal(after.statusCode, 200, 'the server goes on')
})

t.test('a body sent in time on a kept-alive connection is not cut by an earlier request\'s timer', async (t) => {
  const app = await build(t, { REQUEST_TIMEOUT: '1' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  // fetch keeps its connection to the server open between the requests.
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`http://127.0.0.1:${port}/api/markdown/parse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ markdown: `*${i}*` }) })
    t.equal(response.status, 200)
    await response.text()
    await new Promise((resolve) => setTimeout(resolve, 600))
  }
})

t.test('a body whose rest comes in a later packet, within REQUEST_TIMEOUT, is answered; past it, 408', async (t) => {
  const app = await build(t, { REQUEST_TIMEOUT: '1' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const body = JSON.stringify({ markdown: '*late*' })
  const request = 'POST /api/markdown/parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
  for (const [restAfterMs, status] of [[300, 200], [1500, 408]] as const) {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    let answer = ''
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
    socket.on('error', () => {})
    // Headers and the start of the body in one packet, as a client sends them; the last bytes later.
    socket.write(request.slice(0, -4))
    const rest = setTimeout(() => { if (socket.writable) socket.write(request.slice(-4)) }, restAfterMs)
    await once(socket, 'close')
    clearTimeout(rest)
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `the rest after ${restAfterMs} ms: ${status}`)
  }
})
