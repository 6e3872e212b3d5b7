import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { README } from '../test/support/markdown-corpus.js'
const autocannon = createRequire(import.meta.url)('autocannon')
async function start (cli: string, port: number) {
  const env = { PATH: process.env.PATH ?? '', NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent', JWT_SECRET: 'x'.repeat(40), DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'ab-')), 'm.db')}`, RATE_LIMIT_EXEMPT: '127.0.0.1', BODY_LIMIT: String(4 << 20) }
  const child = spawn('taskset', ['-c', '0', process.execPath, cli, 'serve'], { env, stdio: 'ignore' })
  for (;;) { try { if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).ok) break } catch {} await new Promise((r) => setTimeout(r, 100)) }
  return child
}
const which = process.argv[2] ?? 'README'
const servers = { new: await start('/work/main/dist/cli.js', 4101), old: await start('/tmp/old/dist/cli.js', 4102) }
const body = JSON.stringify({ markdown: README })
const rates: Record<string, number[]> = { old: [], new: [] }
for (let round = 0; round < 7; round++) {
  for (const [name, port] of (round % 2 === 0 ? [['old', 4102], ['new', 4101]] : [['new', 4101], ['old', 4102]]) as Array<[string, number]>) {
    const r = await autocannon({ url: `http://127.0.0.1:${port}`, connections: 10, duration: 4, requests: [{ method: 'POST', path: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, body }] })
    rates[name]!.push(Math.round(r.requests.average))
  }
}
for (const [k, v] of Object.entries(rates)) console.log(k, v.sort((a, b) => a - b).join(' '), 'median', v[3])
for (const child of Object.values(servers)) child.kill()
