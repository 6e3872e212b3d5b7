// Does an unknown username answer as slowly as a wrong password? Failed logins one at a time, the
// two kinds interleaved; prints their medians and ratio. Then, does password hashing block the event
// loop? 50 logins at once, over and over, while a second client measures GET /health/live. Prints the
// liveness latency percentiles and login rate.
// Run: npm run bench:login
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importBuiltApp } from './built-app.js'
import { median } from './harness.js'

const CONCURRENT_LOGINS = 50
const DURATION_MS = 8000
const FAILED_LOGINS_EACH = 41

if (process.argv[2] === 'serve') {
  const { buildApp, loadConfig } = await importBuiltApp()
  const { hashPassword } = await import('../lib/passwords.js')
  const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
  const app = await buildApp(loadConfig({
    DATABASE_URL: `sqlite:${join(directory, 'bench.db')}`, JWT_SECRET: 'bench-secret-of-at-least-32-characters!!', LOG_LEVEL: 'warn'
  }), { loginThrottle: { maxFailuresPerUsername: 1e9, maxFailuresPerAddress: 1e9 } })
  await app.ready()
  await app.store.add({ username: 'bench', passwordHash: await hashPassword('bench-password'), name: 'Bench', birthdate: '1990-01-01', gender: 'x', shortDesc: '' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  process.send?.({ port: (app.server.address() as { port: number }).port })
} else {
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'] })
  const [{ port }] = await once(child, 'message') as [{ port: number }]
  const base = `http://127.0.0.1:${port}`

  const failedLoginMs = async (username: string) => {
    const started = performance.now()
    const response = await fetch(`${base}/api/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: 'a wrong guess' })
    })
    await response.arrayBuffer()
    if (response.status !== 403) throw new Error(`a failed login answered ${response.status}`)
    return performance.now() - started
  }
  await failedLoginMs('bench')
  await failedLoginMs('warm-up-unknown')
  const wrongPassword: number[] = []
  const unknownUser: number[] = []
  for (let i = 0; i < FAILED_LOGINS_EACH; i++) {
    wrongPassword.push(await failedLoginMs('bench'))
    unknownUser.push(await failedLoginMs(`nobody-${i}`))
  }
  console.log(`failed logins, one at a time: ${FAILED_LOGINS_EACH} of each kind, interleaved`)
  console.log(`  median wrong password ${median(wrongPassword).toFixed(1)} ms, unknown user ${median(unknownUser).toFixed(1)} ms: ` +
    `ratio ${(median(unknownUser) / median(wrongPassword)).toFixed(3)} (goal: 0.8 to 1.25)`)

  const deadline = Date.now() + DURATION_MS
  let logins = 0
  const loginLoop = async () => {
    while (Date.now() < deadline) {
      const response = await fetch(`${base}/api/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bench', password: 'bench-password' })
      })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`login answered ${response.status}`)
      logins++
    }
  }
  const latencies: number[] = []
  const probeLoop = async () => {
    await new Promise((resolve) => setTimeout(resolve, 500))
    while (Date.now() < deadline) {
      const started = performance.now()
      const response = await fetch(`${base}/health/live`)
      await response.arrayBuffer()
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  await Promise.all([...Array.from({ length: CONCURRENT_LOGINS }, loginLoop), probeLoop()])
  child.kill()
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] as number).toFixed(1)
  console.log(`login under load: ${CONCURRENT_LOGINS} concurrent logins for ${DURATION_MS / 1000} s`)
  console.log(`  logins completed: ${logins} (${(logins / (DURATION_MS / 1000)).toFixed(1)}/s)`)
  console.log(`  GET /health/live during it: ${latencies.length} probes, p50 ${percentile(0.5)} ms, p99 ${percentile(0.99)} ms, max ${percentile(1)} ms (goal: p99 < 50 ms)`)
}
