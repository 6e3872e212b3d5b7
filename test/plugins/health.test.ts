import t from 'tap'
import { build } from '../support/helper.js'

t.test('live answers while the process runs; ready follows the database', async (t) => {
  const app = await build(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.equal(live.headers['content-type'], 'application/json; charset=utf-8')
  t.same(live.json(), { status: 'ok' })
  t.same((await app.inject({ url: '/health/ready' })).json(), { status: 'ok' })

  await app.store.close()
  const notReady = await app.inject({ url: '/health/ready' })
  t.equal(notReady.statusCode, 503)
  t.same(notReady.json(), { error: { code: 503, message: 'Database unavailable' } })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'live does not depend on the database')
})
