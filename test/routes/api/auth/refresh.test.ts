import t from 'tap'
import { addUser, build, login } from '../../../support/helper.js'
import { forgeries, sessionIdOf } from '../../../support/forge.js'

const refreshWith = (fields: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/api/auth/refresh',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString()
})

t.test('a refresh token buys a new access token and no new refresh token (CONTRACT A2)', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const tokens = await login(app, 'ada', 'correct horse')
  const response = await app.inject(refreshWith({ refresh_token: tokens.refresh_token }))
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['access_token', 'expires_in'])
  t.equal(body.expires_in, 3600)
  const list = await app.inject({ url: `/api/user/list?access_token=${encodeURIComponent(body.access_token)}` })
  t.equal(list.statusCode, 200, 'the new access token works')

  const json = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: tokens.refresh_token } })
  t.equal(json.statusCode, 200, 'a JSON body works too')
})

t.test('every problem with the refresh token answers 400 Invalid refresh token', async (t) => {
  const app = await build(t)
  const user = await addUser(app, { username: 'ada', password: 'correct horse' })
  const tokens = await login(app, 'ada', 'correct horse')
  const attacks: Record<string, () => Promise<Awaited<ReturnType<typeof app.inject>>>> = {
    'missing field': async () => await app.inject(refreshWith({})),
    'empty JSON body': async () => await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: {} }),
    'token as a number': async () => await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: 42 } }),
    'token as an object': async () => await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: { a: 1 } } }),
    'access token used as refresh token': async () => await app.inject(refreshWith({ refresh_token: tokens.access_token }))
  }
  // Bent from the refresh token of an open session: each is refused for its own attack.
  t.equal((await app.inject(refreshWith({ refresh_token: tokens.refresh_token }))).statusCode, 200, 'the session the forgeries claim is open')
  for (const [name, token] of Object.entries(forgeries(user.id, 'refresh', sessionIdOf(tokens.refresh_token)))) {
    attacks[name] = async () => await app.inject(refreshWith({ refresh_token: token }))
  }
  for (const [name, attack] of Object.entries(attacks)) {
    const response = await attack()
    t.equal(response.statusCode, 400, name)
    t.same(response.json(), { error: { code: 400, message: 'Invalid refresh token' } }, name)
  }
})

t.test('removing the user or changing the password revokes refresh tokens at once', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  await addUser(app, { username: 'grace', password: 'cobol rules' })
  const ada = await login(app, 'ada', 'correct horse')
  const grace = await login(app, 'grace', 'cobol rules')
  // Each token is used once first: the verified-token memo and the user cache hold it when it is revoked.
  for (const { refresh_token: token } of [ada, grace]) t.equal((await app.inject(refreshWith({ refresh_token: token }))).statusCode, 200)

  await app.database.changePassword('ada', 'new-hash-not-used-here')
  t.equal((await app.inject(refreshWith({ refresh_token: ada.refresh_token }))).statusCode, 400, 'issued before the password change')

  await app.database.remove('grace')
  t.equal((await app.inject(refreshWith({ refresh_token: grace.refresh_token }))).statusCode, 400, 'user removed')
})
