import t from 'tap'
import { createClient } from '../generated/hey-api/client/index.js'
import { getLiveness, getReadiness, getSunInfo, listUsers, login, logout, refreshToken, renderMarkdown } from '../generated/hey-api/sdk.gen.js'
import { addUser, build } from '../support/helper.js'

/**
 * The SDK that @hey-api/openapi-ts generates from openapi.json (npm run clients), another family
 * of generator than openapi-typescript: one function per operationId, called as its users would,
 * against the app listening on a port. Its code compiles under the project's strict settings.
 */
t.test('every operation through the @hey-api/openapi-ts SDK', async (t) => {
  const app = await build(t)
  for (let n = 1; n <= 3; n++) await addUser(app, { username: `user${n}`, password: `password-${n}` })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}` })

  t.equal((await getLiveness({ client })).data?.status, 'ok')
  t.equal((await getReadiness({ client })).data?.status, 'ok')

  const session = await login({ client, body: { username: 'user1', password: 'password-1' } })
  t.equal(session.response.status, 200)
  const refreshTokenValue = session.data?.refresh_token
  if (refreshTokenValue === undefined) throw new Error('login failed')

  const refreshed = await refreshToken({ client, body: { refresh_token: refreshTokenValue } })
  t.equal(refreshed.data?.expires_in, 3600)
  const accessToken = refreshed.data?.access_token
  if (accessToken === undefined) throw new Error('refresh failed')

  // The document's apiKey scheme: the SDK puts the token in the access_token query parameter.
  client.setConfig({ auth: () => accessToken })
  const page = await listUsers({ client, query: { page: 2, per_page: 2 } })
  t.equal(page.response.status, 200)
  t.same(page.data?.meta, { count_total: 3, count_loaded: 1, current_page: 2, total_pages: 2 })
  t.same(page.data?.data.map((user) => user.id), ['3'])
  t.match(page.request.url, /[?&]access_token=/, 'the token travels in the query, as the contract says')

  const sun = await getSunInfo({ client, query: { timestamp: 1700000000, latitude: 51.4779, longitude: -0.0015 } })
  const sunset: number | null | undefined = sun.data?.data.sunset
  t.equal(sunset, 1699978352)
  // Greenwich in November: every pair of events happens.
  t.same(sun.data?.day, { sunrise_sunset: 'crosses', civil_twilight: 'crosses', nautical_twilight: 'crosses', astronomical_twilight: 'crosses' })
  // The SDK types each pair of day as the union of the enum's values, not a string.
  type Span = NonNullable<typeof sun.data>['day']['astronomical_twilight']
  const exactlyTheEnum: [Span] extends ['above' | 'below' | 'crosses'] ? (['above' | 'below' | 'crosses'] extends [Span] ? true : false) : false = true
  t.ok(exactlyTheEnum)
  // @ts-expect-error a value outside the enum does not type-check
  const outside: Span = 'dusk'
  t.ok(outside)

  const html = await renderMarkdown({ client, body: { markdown: '~~gone~~ and `code`' } })
  t.equal(html.data?.data, '<p><s>gone</s> and <code>code</code></p>\n')

  const refused = await login({ client, body: { username: 'user1', password: 'wrong' } })
  t.equal(refused.response.status, 403)
  t.same(refused.error, { error: { code: 403, message: 'Invalid credentials' } }, 'errors come back typed as the error body')

  const loggedOut = await logout({ client, body: { refresh_token: refreshTokenValue } })
  t.same([loggedOut.response.status, loggedOut.data], [200, { status: 'ok' }], 'logout ends the session')
  t.same((await listUsers({ client })).error, { error: { code: 403, message: 'Token expired or invalid' } }, 'its access tokens are refused')
  t.same((await refreshToken({ client, body: { refresh_token: refreshTokenValue } })).error, { error: { code: 400, message: 'Invalid refresh token' } })
  t.same((await logout({ client, body: { refresh_token: refreshTokenValue } })).data, { status: 'ok' }, 'a second logout answers the same')

  client.setConfig({ auth: () => 'not-a-token' })
  const forbidden = await listUsers({ client })
  t.same(forbidden.error, { error: { code: 403, message: 'Token expired or invalid' } })
})
