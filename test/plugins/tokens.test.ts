import t from 'tap'
import { addUser, build, login, TEST_JWT_SECRET } from '../support/helper.js'

const NEW_SECRET = 'the-next-signing-secret-at-least-32-characters'
const UNRELATED_SECRET = 'another-previous-secret-of-more-than-32-chars'

t.test('key rotation across a redeploy: old tokens work until their key is dropped', async (t) => {
  // The same database, as replicas before and after a redeploy would share it.
  const before = await build(t)
  await addUser(before, { username: 'ada', password: 'correct horse' })
  const old = await login(before, 'ada', 'correct horse')
  const dbFile = before.database.sqliteFile as string
  await before.close()

  const rotated = await build(t, { DATABASE_URL: `sqlite:${dbFile}`, JWT_SECRET: NEW_SECRET, JWT_PREVIOUS_SECRETS: `${TEST_JWT_SECRET},${UNRELATED_SECRET}` })
  t.equal((await rotated.inject({ url: `/api/user/list?access_token=${old.access_token}` })).statusCode, 200, 'an access token of the previous key still works')
  const refreshed = await rotated.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: old.refresh_token } })
  t.equal(refreshed.statusCode, 200, 'a refresh token of the previous key still works')
  const fresh = refreshed.json().access_token as string
  t.equal((await rotated.inject({ url: `/api/user/list?access_token=${fresh}` })).statusCode, 200)
  await rotated.close()

  const finished = await build(t, { DATABASE_URL: `sqlite:${dbFile}`, JWT_SECRET: NEW_SECRET })
  t.equal((await finished.inject({ url: `/api/user/list?access_token=${old.access_token}` })).statusCode, 403, 'the retired key\'s tokens are refused')
  t.equal((await finished.inject({ url: `/api/user/list?access_token=${fresh}` })).statusCode, 200, 'tokens of the new key work')
})
