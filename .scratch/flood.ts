import { startService } from '../bench/service.js'
import { README } from '../test/support/markdown-corpus.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const service = await startService('image', `sqlite:${join(mkdtempSync(join(tmpdir(), 'f-')), 'm.db')}`)
const flood = README.repeat(Math.ceil(900_000 / README.length)).slice(0, 900_000)
const body = JSON.stringify({ markdown: flood })
const statuses: Record<string, number> = {}
let lastBody = ''
const end = Date.now() + 5000
await Promise.all(Array.from({ length: 8 }, async () => {
  while (Date.now() < end) {
    const started = performance.now()
    const r = await fetch(`${service.url}/api/markdown/parse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const text = await r.text()
    const key = `${r.status}`
    statuses[key] = (statuses[key] ?? 0) + 1
    if (r.status !== 200) lastBody = text.slice(0, 200) + ' ' + JSON.stringify(Object.fromEntries(r.headers))
    else statuses.ms = Math.round(performance.now() - started)
  }
}))
console.log(statuses, lastBody)
await service.stop()
