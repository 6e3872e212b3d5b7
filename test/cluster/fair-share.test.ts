import t from 'tap'
import { balancerLog, clusterTestSkip, startCluster, STOCK_NGINX_CONFIG } from './harness.js'
import { fairShareScenario, percentile } from '../support/fair-share-load.js'

/** As test/fair-share-flood.test.ts: the polite clients' p99 during the flood within 3× their own, or under 100 ms. */
const P99_GROWTH_BOUND = 3
const P99_ABSOLUTE_BOUND_MS = 100
/** One share of Markdown bytes is 4 MiB a minute: four documents of 900 KB; one share per replica would be eight. */
const DOCUMENTS_IN_ONE_SHARE = 4
/** A charge reaches the other replica within a sync (100 ms): a document arriving there sooner may pass. */
const SYNC_ALLOWANCE = 1

t.test('through deploy/nginx.conf and two replicas on Redis: one client flooding Markdown gets one share, however nginx spreads it, and the others stay served', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { network: '127.0.9', env: { LOG_LEVEL: 'info' } })
  await cluster.addUser('reader', 'reader-password')
  const politeAddresses = cluster.otherClientAddresses.slice(0, 8)
  const flooderAddress = cluster.otherClientAddresses[8] as string
  const clients: Array<{ address: string, accessToken: string }> = []
  for (const address of politeAddresses) {
    const login = await cluster.request('/api/auth/login', { from: address, form: { username: 'reader', password: 'reader-password' } })
    t.equal(login.status, 200, `client ${address} logged in`)
    clients.push({ address, accessToken: login.json().access_token })
  }
  const logFrom = balancerLog(cluster).length

  const { alone: baseline, duringFlood, flood } = await fairShareScenario(cluster.balancer, clients,
    { address: flooderAddress, connections: 24, bytes: 900 * 1024 }, { rounds: 1, aloneMs: 3000, floodMs: 6000 })

  const baselineP99 = percentile(baseline.latenciesMs, 0.99)
  const floodP99 = percentile(duringFlood.latenciesMs, 0.99)
  const bound = Math.max(P99_GROWTH_BOUND * baselineP99, P99_ABSOLUTE_BOUND_MS)
  t.comment(`the eight clients: p99 ${baselineP99.toFixed(1)} ms alone (${baseline.latenciesMs.length} answers), ` +
    `${floodP99.toFixed(1)} ms during the flood (${duringFlood.latenciesMs.length} answers)`)
  t.comment(`the flooder's answers: ${JSON.stringify(flood.statuses)}, network errors ${flood.networkErrors}`)
  t.same(Object.keys(duringFlood.statuses), ['200'], 'every answer of the others is 200 during the flood')
  t.ok(floodP99 <= bound, `their p99 during the flood, ${floodP99.toFixed(1)} ms, is within ${bound.toFixed(0)} ms`)
  t.ok((flood.statuses[429] ?? 0) > 0, 'the flooder is refused with 429')
  t.equal(flood.refusedWithoutRetryAfter, 0, 'with Retry-After')
  t.equal(flood.networkErrors, 0, 'behind nginx, no refusal resets a connection')
  t.notOk(flood.statuses[503], 'never 503')
  const rendered = flood.statuses[200] ?? 0
  t.ok(rendered <= DOCUMENTS_IN_ONE_SHARE + SYNC_ALLOWANCE, `the flooder got one share rendered, not one per replica (${rendered} documents)`)

  const flooderLines = balancerLog(cluster, logFrom).filter((line) => line.startsWith(`${flooderAddress} `))
  const replicasReached = new Set(cluster.replicas.map((replica) => `${replica.endpoint.host}:${replica.endpoint.port}`).filter((endpoint) => flooderLines.some((line) => line.includes(`upstream=${endpoint}`))))
  t.equal(replicasReached.size, 2, `nginx spread the flooder's requests over both replicas (${flooderLines.length} requests)`)

  // nginx's coarse limit (50 a second, a burst of 100) is the API's only, as the replicas' is.
  const [prober] = politeAddresses as [string]
  /** 250 requests at once from one address: how many nginx refused (its 429 has no RateLimit header, a replica's has). */
  const refusedByBalancer = async (path: string) => (await Promise.all(Array.from({ length: 250 }, async () =>
    await cluster.request(path, { from: prober })))).filter((answer) => answer.status === 429 && answer.headers.ratelimit === undefined).length
  t.equal(await refusedByBalancer('/health/live'), 0, '250 health checks at once from one address: none refused')
  t.equal(await refusedByBalancer('/openapi.json'), 0, 'nor 250 fetches of the OpenAPI document')
  t.ok(await refusedByBalancer('/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0') > 0, 'while 250 API requests at once meet the balancer\'s limit')
})

t.test('behind a stock nginx (X-Forwarded-For appended, no limit of its own): each client has its own share across both replicas, whatever it claims', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { network: '127.0.10', nginxConfig: STOCK_NGINX_CONFIG, env: { LOG_LEVEL: 'warn', RATE_LIMIT_REQUESTS: '6' } })
  const [client, other] = cluster.otherClientAddresses as [string, string]
  const sun = (from: string, forged: string) =>
    cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0', { from, agent: false, headers: { 'x-forwarded-for': forged } })
  const statuses: number[] = []
  for (let n = 0; n < 10; n++) {
    statuses.push((await sun(client, `198.51.100.${n}`)).status)
    await new Promise((resolve) => setTimeout(resolve, 150)) // past a sync, whichever replica answers
  }
  t.same(statuses.slice(0, 6), [200, 200, 200, 200, 200, 200], 'the share of six is served')
  // A replica decides on the totals of its own last sync: one request may pass on totals a sync old.
  t.ok(statuses.filter((status) => status === 200).length <= 7, `then refused, a new forged address on each request changing nothing (${statuses.join(' ')})`)
  t.same(statuses.slice(-2), [429, 429], 'on either replica')
  t.equal((await sun(other, '198.51.100.1')).status, 200, 'another client, claiming the same forged address, has its own share')
})
