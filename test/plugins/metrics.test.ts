import { readFileSync } from 'node:fs'
import t from 'tap'
import { listenForMetrics } from '../../plugins/app/metrics.js'
import { addUser, build, login } from '../support/helper.js'
import { postgresDatabase, postgresSkip } from '../support/postgres.js'
import { inRepository } from '../support/repository.js'

t.test('requests are counted and timed by route pattern and status; no URL or token in a label', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'ada-password' })
  const { access_token: token } = await login(app, 'ada', 'ada-password')
  await app.inject({ url: `/api/user/list?access_token=${token}&page=2` })
  await app.inject({ url: '/api/user/list?access_token=wrong' })
  await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0' })
  await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: '*a*' } })

  const text = await app.metricsRegistry.metrics()
  t.match(text, /http_request_duration_seconds_count\{method="GET",route="\/api\/user\/list",status_code="200"\} 1/)
  t.match(text, /http_request_duration_seconds_count\{method="GET",route="\/api\/user\/list",status_code="403"\} 1/)
  t.match(text, /http_request_duration_seconds_count\{method="POST",route="\/api\/auth\/login",status_code="200"\} 1/)
  t.match(text, /http_request_duration_seconds_bucket\{le="0.05",method="GET",route="\/api\/date\/suninfo",status_code="200"\}/)
  t.notOk(text.includes(token) || text.includes('access_token'), 'no token and no query string in the metrics')
  t.match(text, /nodejs_eventloop_lag_seconds \d/, 'event-loop delay')
  t.match(text, /meridian_markdown_pending_characters 0/, 'the Markdown render queue, empty again')
  t.match(text, /meridian_markdown_queued_renders 0/)
  t.notMatch(text, /meridian_database_pool_connections/, 'the embedded database has no pool')
})

t.test('the Markdown gauges show a render in progress', async (t) => {
  const app = await build(t, {}, { markdownRenderer: { threads: 1 } })
  const source = '*a* '.repeat(200_000)
  const renders = [1, 2].map(() => app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: source } }))
  // Until both requests have reached the renderer and its one thread has taken the first (it starts on demand).
  const bothArrived = () => {
    const { pendingCharacters, queuedRenders } = app.markdown.load()
    return pendingCharacters === 2 * source.length && queuedRenders === 1
  }
  const deadline = Date.now() + 5000
  while (Date.now() < deadline && !bothArrived()) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const during = await app.metricsRegistry.metrics()
  t.match(during, new RegExp(`meridian_markdown_pending_characters ${2 * source.length}`), 'both sources are pending')
  t.match(during, /meridian_markdown_queued_renders 1/, 'one waits for the one thread')
  t.same((await Promise.all(renders)).map((response) => response.statusCode), [200, 200])
})

t.test('metrics are served on their own port only, never by the API port', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 404, 'the public port has no /metrics')
  const server = await listenForMetrics(app, '127.0.0.1', 0)
  t.teardown(() => { server.close(); server.closeAllConnections() })
  const { port } = server.address() as { port: number }
  const metrics = await fetch(`http://127.0.0.1:${port}/metrics`)
  t.equal(metrics.status, 200)
  t.match(metrics.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  t.match(await metrics.text(), /# TYPE http_request_duration_seconds histogram/)
  const other = await fetch(`http://127.0.0.1:${port}/api/date/suninfo?timestamp=1&latitude=0&longitude=0`)
  t.equal(other.status, 404, 'and the metrics port serves nothing else')
})

t.test('the PostgreSQL pool is measured', { skip: postgresSkip }, async (t) => {
  const app = await build(t, { DATABASE_URL: await postgresDatabase(t) })
  await app.inject({ url: '/health/ready' })
  t.match(await app.metricsRegistry.metrics(), /meridian_database_pool_connections\{state="total"\} [1-9]/)
})

t.test('readiness is a gauge: 1 while /health/ready answers 200, 0 once it answers 503', async (t) => {
  const app = await build(t)
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_ready 1\n/)
  await app.database.close()
  t.equal((await app.inject({ url: '/health/ready' })).statusCode, 503)
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_ready 0\n/)
})

t.test('logins refused because the throttle store is away are counted, and only those', async (t) => {
  const app = await build(t, { REDIS_URL: 'redis://127.0.0.1:1' })
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_login_refused_throttle_unavailable_total 0\n/)
  for (let i = 0; i < 2; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'whatever' } })
    t.equal(response.statusCode, 503)
  }
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_login_refused_throttle_unavailable_total 2\n/, 'two refusals')
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_login_refused_throttle_unavailable_total 2\n/, 'a second scrape counts nothing twice')

  const healthy = await build(t)
  await healthy.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'nobody', password: 'wrong' } })
  t.match(await healthy.metricsRegistry.metrics(), /\nmeridian_login_refused_throttle_unavailable_total 0\n/, 'a refused password is not a store failure')
})

t.test('requests that match no route are counted, whatever their method and body', async (t) => {
  const app = await build(t)
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_unrouted_requests_total 0\n/)
  const answers = await Promise.all([
    app.inject({ url: '/wp-login.php' }),
    app.inject({ url: '/api/user/list/eyJhbGciOiJIUzI1NiJ9' }),
    app.inject({ method: 'POST', url: '/api/nothing', payload: '{not json', headers: { 'content-type': 'application/json' } }),
    app.inject({ method: 'DELETE', url: '/api/date/suninfo' })
  ])
  t.same(answers.map((answer) => answer.statusCode), [404, 404, 404, 404])
  await app.inject({ url: '/health/live' })
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_unrouted_requests_total 4\n/, 'four, and a routed request is not one')
  t.match(await app.metricsRegistry.metrics(), /\nmeridian_unrouted_requests_total 4\n/, 'a second scrape counts nothing twice')
})

t.test("the guide's metrics table names every metric of the service, and only those (one home per fact: the code; the guide is checked)", async (t) => {
  const guide = readFileSync(inRepository('docs', 'operations.md'), 'utf8')
  const section = guide.slice(guide.indexOf('### Metrics'), guide.indexOf('\n### ', guide.indexOf('### Metrics') + 1))
  const documented = new Set([...section.matchAll(/`((?:meridian|http)_[a-z_]+)/g)].map((match) => match[1]!))
  const app = await build(t)
  const registered = (await app.metricsRegistry.getMetricsAsJSON()).map((metric) => metric.name).filter((name) => /^(?:meridian|http)_/.test(name))
  t.ok(registered.length > 5, `the registry holds the service's metrics (${registered.join(', ')})`)
  for (const name of registered) t.ok(documented.has(name), `${name} is in the guide's table`)
  // On PostgreSQL only: the pool and the notifications; named in the plugin's source.
  const source = readFileSync(inRepository('plugins', 'app', 'metrics.ts'), 'utf8')
  for (const name of documented) t.ok(registered.includes(name) || source.includes(`'${name}'`), `${name}, in the guide, is a metric of plugins/app/metrics.ts`)
})
