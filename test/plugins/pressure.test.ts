import t from 'tap'
import { buildUnready, stallEventLoop } from '../support/helper.js'

t.test('a stalled event loop answers 503 with Retry-After and the error body', async (t) => {
  const app = await buildUnready(t, {}, { maxEventLoopDelayMs: 5 })
  await app.ready()
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
  await stallEventLoop(1500)
  const response = await app.inject({ url: '/api/date/suninfo?timestamp=0&latitude=0&longitude=0' })
  t.equal(response.statusCode, 503)
  t.same(response.json(), { error: { code: 503, message: 'Service unavailable' } })
  t.equal(response.headers['retry-after'], '10')
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200, 'liveness still answers: the process is busy, not dead')
})
