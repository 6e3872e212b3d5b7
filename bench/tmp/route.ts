import { pathologicalCases } from '../markdown.js'
import { importBuiltApp } from '../built-app.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const MiB = 1048576
const { buildApp, loadConfig } = await importBuiltApp()
const app = await buildApp(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'mb-')), 'm.db')}`, JWT_SECRET: 'x'.repeat(40), BODY_LIMIT: String(8 * MiB) }))
await app.ready()
for (const name of process.argv.slice(2)) {
  const c = pathologicalCases.find((x) => x.name === name)!
  const payload = JSON.stringify({ markdown: c.generate(MiB) })
  const times: number[] = []
  for (let i = 0; i < 5; i++) { const t = performance.now(); const r = await app.inject({ method: 'POST', url: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, payload }); times.push(performance.now() - t); if (r.statusCode !== 200) throw new Error(String(r.statusCode)) }
  times.sort((a, b) => a - b)
  console.log(name.padEnd(40), times[2]!.toFixed(0), 'ms median of 5')
}
await app.close()
