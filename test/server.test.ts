import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { DEMO_PASSWORD, DEMO_USERNAME } from '../lib/demo-users.js'

const cliPath = fileURLToPath(new URL('../dist/cli.js', import.meta.url))

async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  return port
}

async function rawRequest (port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  await once(socket, 'close')
  return answer
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

t.test('npm start: demo users on an empty database, then a graceful SIGTERM', async (t) => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [cliPath, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), DATABASE_URL: `sqlite:${join(t.testdir(), 'meridian.db')}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  await waitForReady(base, child)

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

  // A login (an argon2 verification) is in flight when SIGTERM arrives: it must still finish.
  const inFlight = login()
  await new Promise((resolve) => setTimeout(resolve, 5))
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit') as [number | null]
  t.equal((await inFlight).status, 200, 'the in-flight request finished')
  t.equal(code, 0, `exit code 0 (output: ${output.slice(-500)})`)
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
