import { createRequire } from 'node:module'
import { startService } from '../bench/service.js'
import { README } from '../test/support/markdown-corpus.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const require = createRequire(import.meta.url)
const autocannon = require('autocannon')
const service = await startService('image', `sqlite:${join(mkdtempSync(join(tmpdir(), 'f-')), 'm.db')}`)
const flood = README.repeat(Math.ceil(900_000 / README.length)).slice(0, 900_000)
const body = JSON.stringify({ markdown: flood })
const r = await autocannon({ url: service.url, connections: 8, duration: 5, requests: [{ method: 'POST', path: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, body }] })
console.log(r.statusCodeStats, r.latency.p50, r.errors, r.timeouts)
await service.stop()
