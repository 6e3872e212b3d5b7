import t, { type Test } from 'tap'
import { buildApp } from '../app.js'
import { checkResponsesAgainstDocument } from './support/conformance.js'
import { testConfig } from './support/helper.js'

const SUN = '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015'

/** The real app with the conformance check, complaints collected instead of failing the test. */
async function appWithComplaints (t: Test, alter?: (app: Awaited<ReturnType<typeof buildApp>>) => void) {
  const app = await buildApp(testConfig(t), { maxEventLoopDelayMs: 0 })
  t.teardown(async () => { await app.close() })
  const complaints: string[] = []
  // Before the check, so that the check sees what the alteration sends.
  alter?.(app)
  checkResponsesAgainstDocument(app, (message) => { complaints.push(message) })
  await app.ready()
  return { app, complaints }
}

t.test('documented answers pass', async (t) => {
  const { app, complaints } = await appWithComplaints(t)
  t.equal((await app.inject({ url: SUN })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/date/suninfo?timestamp=1&latitude=91&longitude=0' })).statusCode, 400)
  t.equal((await app.inject({ url: '/no/such/route' })).statusCode, 404)
  t.same(complaints, [])
})

t.test('an undocumented status is a complaint', async (t) => {
  const { app, complaints } = await appWithComplaints(t, (app) => {
    app.addHook('onSend', async (request, reply) => { if (request.url.startsWith('/api/date')) reply.code(202) })
  })
  await app.inject({ url: SUN })
  t.match(complaints, [/GET \/api\/date\/suninfo answered 202, which its OpenAPI operation does not document/])
})

t.test('a body off its schema is a complaint', async (t) => {
  const { app, complaints } = await appWithComplaints(t, (app) => {
    app.addHook('onSend', async (request, _reply, payload) => request.url.startsWith('/api/date')
      ? String(payload).replace('"sunrise":', '"sunrise_at":')
      : payload)
  })
  await app.inject({ url: SUN })
  t.match(complaints, [/answered 200 with a body off its OpenAPI schema/])
})
