import t from 'tap'
import { build } from '../support/helper.js'

t.test('every answer carries X-Content-Type-Options: nosniff, errors and unknown routes included', async (t) => {
  const app = await build(t, { BODY_LIMIT: '1024' })
  const answers = {
    'a sun answer': await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=51.5&longitude=0' }),
    'a 400': await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=91&longitude=0' }),
    'a 403': await app.inject({ url: '/api/user/list?access_token=nope' }),
    'an unknown route': await app.inject({ url: '/api/nothing-here' }),
    'a body too large': await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: 'x'.repeat(2048) } }),
    'malformed JSON': await app.inject({ method: 'POST', url: '/api/markdown/parse', headers: { 'content-type': 'application/json' }, payload: '{"markdown":' }),
    'a render': await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: '<b>x</b>' } }),
    'the OpenAPI document': await app.inject({ url: '/openapi.json' }),
    liveness: await app.inject({ url: '/health/live' }),
    'a malformed URL (a framework error)': await app.inject({ url: '/api/date/suninfo?latitude=%E0%A4%A' })
  }
  for (const [what, answer] of Object.entries(answers)) {
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${what} (${answer.statusCode})`)
  }
  t.equal(answers['a body too large'].statusCode, 413)
  t.equal(answers['an unknown route'].statusCode, 404)
})
