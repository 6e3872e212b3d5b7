import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DEMO_PASSWORD, DEMO_USERNAME } from '../../lib/users/demo-users.js'
import { freePort } from '../support/free-port.js'
import { cliPath, inRepository, repositoryRoot } from '../support/repository.js'

async function rawRequest (port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  await once(socket, 'close')
  return answer
}

async function get (port: number, path: string, agent: http.Agent | false = false): Promise<{ status: number, connection: string | undefined, body: unknown }> {
  return await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (response) => {
      let text = ''
      response.on('data', (chunk: Buffer) => { text += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body: JSON.parse(text) }) })
    }).on('error', reject)
  })
}

async function waitForReady (base: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('server did not become ready')
}

t.test('meridian serve: demo users on an empty database, then a graceful SIGTERM', async (t) => {
  const port = await freePort()
  const metricsPort = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [cliPath, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: `sqlite:${join(t.testdir(), 'meridian.db')}`, LOG_LEVEL: 'debug', DRAIN_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const exited = once(child, 'exit') as Promise<[number | null]>
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  await waitForReady(base, child)
  const logged = (message: string, url?: string): number => output.split('\n')
    .filter((line) => line.includes(`"msg":"${message}"`) && (url === undefined || line.includes(`"url":"${url}"`))).length
  const untilLogged = async (count: () => number, atLeast: number): Promise<void> => {
    while (count() < atLeast) {
      if (child.exitCode !== null) throw new Error(`server exited: ${output.slice(-500)}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  const login = async () => await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: DEMO_USERNAME, password: DEMO_PASSWORD })
  })
  const loggedIn = await login()
  t.equal(loggedIn.status, 200, 'the README\'s demo login works')
  const { access_token: token } = await loggedIn.json() as { access_token: string }
  const page = await (await fetch(`${base}/api/user/list?access_token=${token}`)).json() as { meta: { count_total: number, total_pages: number } }
  t.ok(page.meta.count_total >= 45, `${page.meta.count_total} demo users`)
  t.ok(page.meta.total_pages >= 3)

  const withoutHost = await rawRequest(port, 'GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n')
  t.match(withoutHost, /^HTTP\/1\.1 400 /, 'HTTP/1.1 without Host is refused')
  t.match(withoutHost, /content-type: application\/json; charset=utf-8/i)
  t.match(withoutHost, /\r\n\r\n\{"error":\{"code":400,"message":"Host header is required"\}\}$/)

  // A keep-alive connection open before SIGTERM, as a balancer holds one.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  t.equal((await get(port, '/health/live', agent)).status, 200)
  // A login is in flight when SIGTERM arrives, for certain: the server has logged its arrival (a
  // debug line, hence LOG_LEVEL=debug), and
  // cannot have answered it, since the rest of its body is sent only once the drain has begun.
  const form = new URLSearchParams({ username: DEMO_USERNAME, password: DEMO_PASSWORD }).toString()
  const heldLogin = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/api/auth/login',
    agent: false,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) }
  })
  const inFlight = new Promise<number>((resolve, reject) => {
    heldLogin.on('response', (response) => { response.resume(); resolve(response.statusCode ?? 0) }).on('error', reject)
  })
  const loginsLogged = logged('incoming request', '/api/auth/login')
  heldLogin.write(form.slice(0, 9))
  await untilLogged(() => logged('incoming request', '/api/auth/login'), loginsLogged + 1)
  const signalled = performance.now()
  child.kill('SIGTERM')
  await untilLogged(() => logged('draining: readiness answers 503, requests are still served'), 1)
  heldLogin.end(form.slice(9))

  // The signal takes a moment to arrive: poll.
  let ready = await get(port, '/health/ready')
  while (ready.status === 200 && performance.now() - signalled < 500) ready = await get(port, '/health/ready')
  t.same([ready.status, ready.body], [503, { error: { code: 503, message: 'Shutting down' } }], `while draining, readiness answers 503 (${Math.round(performance.now() - signalled)} ms after SIGTERM)`)
  const duringDrain = await get(port, '/health/live', agent)
  t.same([duringDrain.status, duringDrain.connection], [200, 'keep-alive'], 'during the drain requests are served as before')
  t.equal((await get(port, '/health/live')).status, 200, 'and new connections accepted')

  while (await get(port, '/health/live').then(() => true, () => false)) await new Promise((resolve) => setTimeout(resolve, 20))
  const stoppedAcceptingMs = performance.now() - signalled
  t.ok(stoppedAcceptingMs >= 1000, `new connections refused ${Math.round(stoppedAcceptingMs)} ms after SIGTERM, after the 1 s drain`)
  // Prometheus scrapes the replica until it exits, not only until its drain ends.
  const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  t.equal(scraped.status, 200, 'the metrics port still answers while the app closes')
  t.match(await scraped.text(), /^http_request_duration_seconds_count\{method="GET",route="\/health\/live"/m)
  const onKeptConnection = await get(port, '/health/live', agent)
  t.same([onKeptConnection.status, onKeptConnection.connection], [200, 'close'], 'a connection still open carries one more request, then is closed: it was not reset while idle')
  t.equal(await inFlight, 200, 'the login in flight at SIGTERM finished')

  const [code] = await exited
  const drainedMs = performance.now() - signalled
  t.equal(code, 0, `exit code 0 (warnings and errors: ${output.split('\n').filter((line) => !/^\{"level":[23]0,/.test(line)).join('\n').slice(-500)})`)
  t.ok(drainedMs >= 1000, `exited ${Math.round(drainedMs)} ms after SIGTERM, after the 1 s drain`)
  await t.rejects(fetch(`${base}/health/live`), 'no longer accepting')
})

t.test('a start that fails (port already taken) exits 1 with one line', async (t) => {
  const blocker = createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => { blocker.close() })
  const { port } = blocker.address() as { port: number }
  const child = spawn(process.execPath, [cliPath, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), DATABASE_URL: `sqlite:${join(t.testdir(), 'meridian.db')}`, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 1)
  t.match(stderr, /^meridian: listen EADDRINUSE/)
  t.equal(stderr.trim().split('\n').length, 1, 'one line')
})

t.test('a PostgreSQL that accepts but never answers stops the start with one line (#59)', async (t) => {
  // Takes each connection and says nothing: node-postgres gives up after its connection timeout.
  const silent = createServer(() => {}).listen(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(() => { silent.close() })
  const { port } = silent.address() as { port: number }
  const child = spawn(process.execPath, [cliPath, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(await freePort()), DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/meridian`, JWT_SECRET: 'a-secret-of-at-least-thirty-two-characters', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 1)
  t.match(stderr, /^meridian: PostgreSQL: Connection terminated due to connection timeout/)
  t.equal(stderr.trim().split('\n').length, 1, `one line, no stack: ${stderr.slice(0, 300)}`)
})

t.test('npm start hands SIGTERM on to the server, which drains and exits: no server is left behind', async (t) => {
  const port = await freePort()
  // Run by the shell npm starts it with (sh -c); a shell that does not exec its command, as
  // Debian's dash does not, would stop on the signal and leave the server running.
  const npm = spawn('npm', ['start'], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), DATABASE_URL: `sqlite:${join(t.testdir(), 'meridian.db')}`, LOG_LEVEL: 'debug', DRAIN_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const npmExited = new Promise<void>((resolve, reject) => { npm.once('exit', () => { resolve() }).once('error', reject) })
  t.teardown(() => { npm.kill('SIGKILL') })
  let output = ''
  npm.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  npm.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  await Promise.race([waitForReady(`http://127.0.0.1:${port}`, npm), npmExited.then(() => { throw new Error(`npm start exited: ${output.slice(-500)}`) })])
  const loggedPid = (): number | undefined => output.split('\n').filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { pid?: number }).pid).find((pid) => pid !== undefined)
  // Log lines reach the pipe in batches, up to 100 ms after they are written (app.ts).
  for (let i = 0; i < 100 && loggedPid() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  const serverPid = loggedPid()
  if (serverPid === undefined) throw new Error(`the server logged no pid: ${output.slice(-500)}`)
  const isRunning = (): boolean => { try { process.kill(serverPid, 0); return true } catch { return false } }
  t.teardown(() => { if (isRunning()) process.kill(serverPid, 'SIGKILL') })
  t.not(serverPid, npm.pid, 'npm runs the server as a child process')

  npm.kill('SIGTERM')
  await npmExited
  for (let i = 0; i < 100 && isRunning(); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.notOk(isRunning(), 'the server exited with npm')
  t.match(output, /"signal":"SIGTERM","msg":"closing"/, 'on SIGTERM')
  t.match(output, /"msg":"draining: readiness answers 503/, 'after its drain')
})

/** `meridian serve` at LOG_LEVEL=info on a database of its own, its standard output a pipe as in a container; once ready. */
async function serveWithLogs (t: Test, nodeArgs: string[] = []): Promise<{ port: number, child: ChildProcess, exited: Promise<[number | null]>, lines: () => Array<Record<string, unknown>> }> {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeArgs, cliPath, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), DATABASE_URL: `sqlite:${join(t.testdir(), 'meridian.db')}`, NODE_ENV: 'test', LOG_LEVEL: 'info', DRAIN_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const exited = once(child, 'exit') as Promise<[number | null]>
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  await waitForReady(`http://127.0.0.1:${port}`, child)
  // Every line whole and JSON: a line cut short by the exit fails the parse.
  return { port, child, exited, lines: () => output.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) }
}

/** The request ids of "request completed" lines. */
const completedIds = (lines: Array<Record<string, unknown>>): Set<unknown> =>
  new Set(lines.filter((line) => line.msg === 'request completed').map((line) => line.reqId))

/** Sun requests with ids `${prefix}-n` from 20 keep-alive connections until `until` says stop or the server refuses: the ids answered. */
async function sendUntil (port: number, prefix: string, until: (answered: number) => boolean): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 })
  const answered: string[] = []
  let sent = 0
  const worker = async (): Promise<void> => {
    while (!until(answered.length)) {
      const id = `${prefix}-${sent++}`
      const status = await new Promise<number>((resolve) => {
        http.get({ host: '127.0.0.1', port, agent, path: '/api/date/suninfo?timestamp=1700000000&latitude=48.85&longitude=2.35', headers: { 'x-request-id': id } }, (response) => {
          response.resume()
          response.on('end', () => { resolve(response.statusCode ?? 0) })
        }).on('error', () => { resolve(0) })
      })
      if (status === 0) return
      answered.push(id)
    }
  }
  await Promise.all(Array.from({ length: 20 }, worker))
  agent.destroy()
  return answered
}

t.test('no log line is lost: each answered request has its line, through SIGTERM under load and an uncaught error', async (t) => {
  t.test('SIGTERM in the middle of a load', async (t) => {
    const { port, child, exited, lines } = await serveWithLogs(t)
    let signalled = false
    const answered = await sendUntil(port, 'term', (count) => {
      if (count >= 500 && !signalled) { signalled = true; child.kill('SIGTERM') }
      // On through the drain, until the server refuses connections.
      return false
    })
    const [code] = await exited
    t.equal(code, 0)
    t.ok(answered.length > 500, `${answered.length} requests answered, SIGTERM after the 500th`)
    const logged = completedIds(lines())
    t.same(answered.filter((id) => !logged.has(id)), [], 'every answered request has its "request completed" line')
    t.ok(lines().some((line) => line.msg === 'closing' && line.signal === 'SIGTERM'), 'and the closing line')
    t.match(lines().at(-1), { msg: 'closed' }, 'and the last line, written as the process exits')
  })

  t.test('an uncaught error', async (t) => {
    const preload = inRepository('test', 'support', 'throw-on-sigwinch.mjs')
    const { port, child, exited, lines } = await serveWithLogs(t, ['--import', preload])
    const answered = await sendUntil(port, 'crash', (count) => count >= 300)
    child.kill('SIGWINCH')
    const [code] = await exited
    t.equal(code, 1, 'close-with-grace exits 1 after an uncaught error')
    const logged = completedIds(lines())
    t.same(answered.filter((id) => !logged.has(id)), [], `each of the ${answered.length} answered requests has its line`)
    t.match(lines().find((line) => line.msg === 'closing after an unexpected error'), { level: 50, err: { message: 'a deliberate uncaught error' } })
    t.match(lines().at(-1), { msg: 'closed' }, 'and the last line, written as the process exits')
  })
})
