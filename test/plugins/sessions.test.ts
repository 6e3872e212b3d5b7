import t from 'tap'
import type { SessionId } from '../../lib/store/session-store.js'
import { addUser, build, login } from '../support/helper.js'
import { sessionIdOf } from '../support/forge.js'

t.test('in the steady state a token check reads no session from the database; an end anywhere makes it read once', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const session = await login(app, 'ada', 'correct horse')
  const other = await login(app, 'ada', 'correct horse')
  const reads: string[] = []
  const findOpen = app.database.sessions.findOpen.bind(app.database.sessions)
  app.database.sessions.findOpen = async (id: SessionId) => { reads.push(id); return await findOpen(id) }
  const use = async () => {
    for (let n = 0; n < 5; n++) {
      t.equal((await app.inject({ url: `/api/user/list?access_token=${session.access_token}` })).statusCode, 200)
      t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: session.refresh_token } })).statusCode, 200)
    }
  }
  await use()
  t.same(reads, [sessionIdOf(session.access_token)], 'ten requests, one read: the first')

  // Ended by "another process": straight in the store, as the CLI or another replica would.
  await app.database.sessions.end(sessionIdOf(other.refresh_token) as SessionId, (await app.database.findByUsername('ada'))?.id ?? 0, 'logout')
  reads.length = 0
  await use()
  t.same(reads, [sessionIdOf(session.access_token)], 'after a session ended elsewhere, one read again, then none')
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: other.refresh_token } })).statusCode, 400)
})

t.test('ended and expired sessions are pruned, each counted by its cause; open ones stay', async (t) => {
  const app = await build(t)
  const ada = await addUser(app, { username: 'ada', password: 'ada-password' })
  const grace = await addUser(app, { username: 'grace', password: 'grace-password' })
  await addUser(app, { username: 'alan', password: 'alan-password' })
  const loggedOut = await login(app, 'ada', 'ada-password')
  const kept = await login(app, 'ada', 'ada-password')
  await login(app, 'grace', 'grace-password')
  await login(app, 'grace', 'grace-password')
  await login(app, 'alan', 'alan-password')
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: loggedOut.refresh_token } })).statusCode, 200)
  await app.database.sessions.endAllOf(grace.id, 'operator')
  await app.database.remove('alan')
  await app.database.sessions.start(ada.id, Date.now() - 1, Date.now() - 60_000)
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_sessions_started_total 5\n/, 'five logins, five sessions')

  t.equal(await app.sessions.prune(), 5, 'every session but one was ended or expired')
  t.same((await app.database.sessions.listOpen(ada.id)).map((session) => session.id), [sessionIdOf(kept.refresh_token)], 'the open one stays')
  t.same(await app.database.sessions.pruneSome(Date.now(), 100), [], 'nothing else is left in the table')
  const metrics = await app.metricsRegistry.metrics()
  for (const [cause, count] of [['logout', 1], ['operator', 2], ['removal', 1], ['expiry', 1], ['password', 0]] as const) {
    t.match(metrics, new RegExp(`\nmeridian_sessions_ended_total\\{cause="${cause}"\\} ${count}\n`), `${cause}: ${count}`)
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: kept.refresh_token } })).statusCode, 200)
  t.equal(await app.sessions.prune(), 0, 'a second run finds nothing')
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_sessions_ended_total\{cause="logout"\} 1\n/, 'and a second scrape counts nothing twice')
})

t.test('a session\'s last use is written, in batches, by the requests of its tokens', async (t) => {
  const app = await build(t)
  const ada = await addUser(app, { username: 'ada', password: 'correct horse' })
  const session = await login(app, 'ada', 'correct horse')
  const [started] = await app.database.sessions.listOpen(ada.id)
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: session.refresh_token } })).statusCode, 200)
  const usedAt = app.sessionUse.lastSeen(sessionIdOf(session.refresh_token) as SessionId) ?? 0
  t.ok(usedAt > (started?.startedAt ?? Infinity), 'the refresh is the session\'s last use')
  await app.sessionUse.flush()
  t.equal((await app.database.sessions.listOpen(ada.id))[0]?.lastUsedAt, usedAt, 'and it is written')
})
