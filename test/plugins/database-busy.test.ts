import BetterSqlite3 from '../../lib/store/better-sqlite3.js'
import t from 'tap'
import { addUser, build, login } from '../helper.js'

t.test('a database lock held by another writer: requests still answer, and activity is written once it is released', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const { access_token: token } = await login(app, 'ada', 'correct horse')

  // Another process (the CLI, a backup) holding the write lock for longer than the busy timeout.
  const other = new BetterSqlite3(app.store.sqliteFile as string)
  t.teardown(() => { other.close() })
  other.exec('BEGIN IMMEDIATE')
  other.prepare("UPDATE users SET short_desc = 'locked' WHERE username = 'ada'").run()

  const list = await app.inject({ url: `/api/user/list?access_token=${token}` })
  t.equal(list.statusCode, 200, 'a read answers')
  const loginWhileLocked = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'correct horse' } })
  t.equal(loginWhileLocked.statusCode, 200, 'a login answers: it writes nothing on its way')
  t.equal(list.json().data[0].online, true, 'ada is online on this replica meanwhile')

  await app.activity.flush()
  t.equal((await app.store.findByUsername('ada'))?.lastSeenAt, null, 'the activity cannot be written while the lock is held')
  other.exec('ROLLBACK')
  await app.activity.flush()
  t.type((await app.store.findByUsername('ada'))?.lastSeenAt, 'number', 'and is written at the next interval once it is released')
})
