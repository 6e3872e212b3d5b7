import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { clusterTestSkip, startCluster, type Cluster } from './harness.js'
import { addLoadUsers, startLoad } from './load.js'
import { postgresServerSkip, startPostgresServer } from './postgres-server.js'

/**
 * A real PostgreSQL restart (`pg_ctl stop -m fast`: every connection closed; the server gone for
 * a second; `pg_ctl start` on the same port) under two replicas behind deploy/nginx.conf.
 */
/** A replica's start takes 1 s on a quiet machine, 15 s or more on a shared one under load. */
const READY_TIMEOUT_MS = 120_000
const NETWORK = '127.0.24'
/** The database's own loopback address, apart from the cluster's .2–.19. */
const POSTGRES_HOST = `${NETWORK}.30`
/** How soon after the database accepts connections again every replica must serve again. */
const RECOVERY_BOUND_MS = 2000
/** How long the server is away. */
const DOWN_MS = 1000
const SUN = '/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015'

interface Sample { at: number, replica: number, route: 'list' | 'sun', status: number | string }

/** Polls every replica directly, one request at a time per replica and route, until `stop` resolves. */
async function probeReplicas (cluster: Cluster, token: string, stopped: () => boolean): Promise<Sample[]> {
  const samples: Sample[] = []
  const list = `/api/user/list?per_page=5&access_token=${encodeURIComponent(token)}`
  await Promise.all(cluster.replicas.flatMap((replica) => (['list', 'sun'] as const).map(async (route) => {
    while (!stopped()) {
      const answer = await cluster.requestReplica(replica.index, route === 'list' ? list : SUN, { agent: false, timeoutMs: 10_000 })
        .then((response) => response.status, (error: NodeJS.ErrnoException) => error.code ?? String(error))
      samples.push({ at: performance.now(), replica: replica.index, route, status: answer })
      await sleep(20)
    }
  })))
  return samples
}

/** When the server stopped accepting connections, and when it accepted them again. */
async function watchDatabase (url: string, stopped: () => boolean): Promise<{ downAt?: number, upAt?: number }> {
  let downAt: number | undefined
  let upAt: number | undefined
  while (!stopped() && upAt === undefined) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    client.on('error', () => {})
    const accepted = await client.connect().then(() => true, () => false)
    await client.end().catch(() => {})
    if (!accepted) downAt ??= performance.now()
    else if (downAt !== undefined) upAt = performance.now()
    await sleep(10)
  }
  return { downAt, upAt }
}

t.test('a real PostgreSQL restart under load: replicas answer 503 where they need it, never exit, and serve again within 2 s', { skip: clusterTestSkip !== false ? clusterTestSkip : postgresServerSkip }, async (t) => {
  const server = await startPostgresServer(t, POSTGRES_HOST)
  const cluster = await startCluster(t, { postgresUrl: server.url, network: NETWORK, env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: READY_TIMEOUT_MS })
  const users = await addLoadUsers(cluster)
  const { access_token: token } = await cluster.login('load-0', 'load-password-0')

  let stop = false
  const load = await startLoad(cluster, users)
  const probes = probeReplicas(cluster, token, () => stop)
  const watch = watchDatabase(cluster.databaseUrl, () => stop)
  await sleep(1000)
  const restartStarted = performance.now()
  await server.restart(DOWN_MS)
  const restartReturned = performance.now()
  await sleep(RECOVERY_BOUND_MS + 1000)
  stop = true
  const [samples, { downAt, upAt }, result] = await Promise.all([probes, watch, load.stop()])

  t.comment(`pg_ctl restart took ${((restartReturned - restartStarted) / 1000).toFixed(2)} s; the database refused connections from ${downAt === undefined ? '?' : ((downAt - restartStarted) / 1000).toFixed(2)} s to ${upAt === undefined ? '?' : ((upAt - restartStarted) / 1000).toFixed(2)} s`)
  t.comment(`load through nginx: ${result.done} requests, ${result.failed} failed ${JSON.stringify(result.failures)}`)
  t.ok(downAt !== undefined && upAt !== undefined, 'the database went away and came back')
  const needsNoDatabase = Object.keys(result.failures).filter((key) => !/ \/api\/(user\/list|auth\/refresh) /.test(key))
  t.same(needsNoDatabase, [], 'through nginx, no sun or Markdown request failed: nginx benched no replica for the 503s of the database outage')
  for (const replica of cluster.replicas) {
    t.ok(replica.running, `replica ${replica.index} never exited`)
    t.same(replica.exits, [], `replica ${replica.index} has no exit`)
  }

  for (const replica of cluster.replicas) {
    const mine = samples.filter((sample) => sample.replica === replica.index)
    const list = mine.filter((sample) => sample.route === 'list')
    const sun = mine.filter((sample) => sample.route === 'sun')
    const count = (statuses: Array<number | string>) => Object.entries(statuses.reduce<Record<string, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {}))
      .map(([status, n]) => `${n}× ${status}`).join(', ')
    const failedLists = list.filter((sample) => sample.status !== 200)
    const lastFailure = failedLists.at(-1)
    const servedAgainMs = lastFailure === undefined || upAt === undefined ? 0 : Math.max(0, lastFailure.at - upAt)
    t.comment(`replica ${replica.index} directly: list ${count(list.map((s) => s.status))}; sun ${count(sun.map((s) => s.status))}; last failed list ${servedAgainMs.toFixed(0)} ms after the database accepted connections`)
    t.ok(failedLists.length > 0, `replica ${replica.index} saw the restart (some list answered otherwise than 200)`)
    t.same([...new Set(failedLists.map((sample) => sample.status))], [503], `replica ${replica.index} answered 503, nothing else, for what needs the database`)
    t.same([...new Set(sun.map((sample) => sample.status))], [200], `replica ${replica.index} answered every sun request 200`)
    t.ok(servedAgainMs <= RECOVERY_BOUND_MS, `replica ${replica.index} served lists again within ${RECOVERY_BOUND_MS} ms of the database accepting connections (${servedAgainMs.toFixed(0)} ms)`)
    t.equal(list.at(-1)?.status, 200, `replica ${replica.index} serves lists at the end`)
  }
})
