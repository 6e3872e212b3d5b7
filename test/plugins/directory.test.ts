import t from 'tap'
import { UserStore } from '../../lib/store/user-store.js'
import { addUser, build, login } from '../helper.js'

t.test('activity not yet written when the app closes is written before the store closes', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  await login(app, 'ada', 'correct horse')
  t.equal((await app.store.findByUsername('ada'))?.lastSeenAt, null, 'the login wrote nothing on its way')
  const databaseUrl = `sqlite:${app.store.sqliteFile as string}`
  await app.close()
  const store = UserStore.open(databaseUrl)
  t.teardown(async () => { await store.close() })
  t.type((await store.findByUsername('ada'))?.lastSeenAt, 'number', 'but closing wrote it')
})
