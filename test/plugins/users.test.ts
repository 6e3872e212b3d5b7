import { eventually } from '../support/eventually.js'
import pg from 'pg'
import t from 'tap'
import { addUser, build, login } from '../support/helper.js'
import { postgresDatabase, postgresSkip } from '../support/postgres.js'

t.test('on PostgreSQL, requests take the counters the database tells, and read them again while it cannot', { skip: postgresSkip }, async (t) => {
  const url = await postgresDatabase(t, 'meridian_directory')
  const app = await build(t, { DATABASE_URL: url })
  await addUser(app, { username: 'told', password: 'told-password' })
  const { access_token: token } = await login(app, 'told', 'told-password')
  const list = async () => await app.inject({ url: `/api/user/list?access_token=${token}` })
  const notificationsLive = async () => /\nmeridian_database_notifications_live 1\n/.test(await app.metricsRegistry.metrics())
  t.ok(await eventually(notificationsLive, 15_000), 'the metric says the replica listens')

  let reads = 0
  const counters = app.database.counters.bind(app.database)
  app.database.counters = async () => { reads++; return await counters() }
  for (let i = 0; i < 50; i++) t.equal((await list()).statusCode, 200)
  // A heartbeat later than the silence bound (a loaded host) stops the vouching for a moment, and a request then reads
  // for itself, as designed; told, nearly all take the counters the database told (5 of 5 read below, untold).
  t.ok(reads <= 3, `50 authenticated requests read the counters ${reads} times, not 50`)

  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'meridian counters feed' and datname = current_database()")
  t.ok(await eventually(async () => !await notificationsLive(), 15_000), 'with its listening connection killed, the metric says it does not listen')
  const before = reads
  for (let i = 0; i < 5; i++) t.equal((await list()).statusCode, 200, 'and the list still answers')
  t.equal(reads - before, 5, 'reading the counters on each request, as before')

  await app.database.changePassword('told', 'another-password')
  t.equal((await list()).statusCode, 403, 'so a change made elsewhere shows in the very next request')
  t.ok(await eventually(notificationsLive, 15_000), 'it listens again on its own')
})
