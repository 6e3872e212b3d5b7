import { PassThrough } from 'node:stream'
import t from 'tap'
import { build } from '../support/helper.js'

t.test('live answers while the process runs; ready follows the database', async (t) => {
  const logStream = new PassThrough()
  const lines: Array<Record<string, unknown>> = []
  logStream.on('data', (chunk: Buffer) => { for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line)) })
  const app = await build(t, { LOG_LEVEL: 'info' }, { logStream })
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.equal(live.headers['content-type'], 'application/json; charset=utf-8')
  t.same(live.json(), { status: 'ok' })
  t.same((await app.inject({ url: '/health/ready' })).json(), { status: 'ok' })

  await app.database.close()
  const notReady = await app.inject({ url: '/health/ready' })
  t.equal(notReady.statusCode, 503)
  t.same(notReady.json(), { error: { code: 503, message: 'Database unavailable' } })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'live does not depend on the database')
  const warning = lines.find((line) => line.msg === 'database not ready')
  t.ok(warning, 'a failed probe is a warning')
  t.notOk('err' in (warning ?? {}) || JSON.stringify(warning).includes('    at '), 'with the failure in a line, no stack (#59)')
  t.type(warning?.reason, 'string')
})
