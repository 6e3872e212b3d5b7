import BetterSqlite3 from 'better-sqlite3'
import t from 'tap'
import { addUser, build, login } from '../helper.js'

t.test('a database lock held by another writer: reads still answer, writes answer 503', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const { access_token: token } = await login(app, 'ada', 'correct horse')

  // Another process (the CLI, a backup) holding the write lock for longer than the busy timeout.
  const other = new BetterSqlite3(app.store.sqliteFile as string)
  t.teardown(() => { other.close() })
  other.exec('BEGIN IMMEDIATE')
  other.prepare("UPDATE users SET short_desc = 'locked' WHERE username = 'ada'").run()

  const list = await app.inject({ url: `/api/user/list?access_token=${token}` })
  t.equal(list.statusCode, 200, 'presence is not recorded, but the read answers')

  const loginWhileLocked = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'correct horse' } })
  t.equal(loginWhileLocked.statusCode, 503, 'a write that cannot get the lock is a retryable 503, not a 500')
  t.same(loginWhileLocked.json(), { error: { code: 503, message: 'Service unavailable' } })

  other.exec('ROLLBACK')
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'correct horse' } })).statusCode, 200)
})
