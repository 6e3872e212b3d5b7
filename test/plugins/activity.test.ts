import t from 'tap'
import { Database } from '../../lib/store/database.js'
import { addUser, build, login } from '../support/helper.js'

t.test('activity not yet written when the app closes is written before the store closes', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  await login(app, 'ada', 'correct horse')
  t.equal((await app.database.findByUsername('ada'))?.lastSeenAt, null, 'the login wrote nothing on its way')
  const databaseUrl = `sqlite:${app.database.sqliteFile as string}`
  await app.close()
  const store = Database.open(databaseUrl)
  t.teardown(async () => { await store.close() })
  t.type((await store.findByUsername('ada'))?.lastSeenAt, 'number', 'but closing wrote it')
})

t.test('an authenticated request records its user as seen; a refused one records no one', async (t) => {
  const app = await build(t)
  const ada = await addUser(app, { username: 'ada', password: 'correct horse' })
  const grace = await addUser(app, { username: 'grace', password: 'cobol rules' })
  const { refresh_token: refreshToken } = await login(app, 'ada', 'correct horse')
  const { access_token: accessToken } = await login(app, 'grace', 'cobol rules')
  // The logins' activity written, and its interval over: this replica holds no activity of theirs.
  await app.activity.flush()
  await app.activity.flush(Date.now() + 60_000)
  t.same([app.activity.lastSeen(ada.id), app.activity.lastSeen(grace.id)], [undefined, undefined])

  const refused = await app.inject({ url: '/api/user/list?access_token=forged' })
  t.equal(refused.statusCode, 403)
  t.equal(app.activity.lastSeen(grace.id), undefined, 'a refused token records no one')
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: refreshToken } })).statusCode, 200)
  t.type(app.activity.lastSeen(ada.id), 'number', 'a refresh records its user')
  t.equal((await app.inject({ url: `/api/user/list?access_token=${accessToken}` })).statusCode, 200)
  t.type(app.activity.lastSeen(grace.id), 'number', 'a list request records its user')
})
