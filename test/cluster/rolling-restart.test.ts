import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { clusterTestSkip, startCluster, STOCK_NGINX_CONFIG, type Cluster, type Exit } from './harness.js'
import { startLoad } from './load.js'

/**
 * Rolling restarts under a mixed load through nginx: every replica in turn gets SIGTERM, is
 * started again and answers ready, then the next. Goal: no failed request, every exit 0.
 * Each rollout runs several times: a race that loses one request in thousands shows only so.
 */
const ROLLOUTS = Number(process.env.ROLLOUTS ?? 2)
const CONNECTIONS = 8
/** nginx's default `fail_timeout`: a replica that failed once gets no requests for this long. */
const STOCK_FAIL_TIMEOUT_MS = 10_000
/** Stock nginx with keep-alive connections to the replicas, as most guides write it. */
const STOCK_KEEPALIVE_NGINX_CONFIG = STOCK_NGINX_CONFIG
  .replace('server replica:3000;', 'server replica:3000;\n    keepalive 16;')
  .replace('proxy_pass http://meridian;', 'proxy_pass http://meridian;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";')

interface Rollout { exits: Exit[], seconds: number }

/** Restarts every replica in turn, `pauseBetweenMs` after the previous one (or the last rollout) was ready. */
async function rollOut (cluster: Cluster, pauseBetweenMs: number): Promise<Rollout> {
  const started = performance.now()
  const exits: Exit[] = []
  for (const replica of cluster.replicas) {
    await sleep(pauseBetweenMs)
    exits.push(await cluster.stopReplica(replica.index))
    await cluster.startReplica(replica.index)
  }
  return { exits, seconds: (performance.now() - started) / 1000 }
}

/**
 * What a rollout must not lose: every request (`'all'`), or only those the balancer may repeat
 * (`'idempotent'`: stock nginx without keep-alive, see the README).
 */
type Guarantee = 'all' | 'idempotent'

async function rollingRestarts (t: Test, nginxConfig: string | undefined, pauseBetweenMs: number, network: string, guarantee: Guarantee = 'all', replicas = 2, rollouts = ROLLOUTS): Promise<void> {
  // A shared machine under load can take 15 s or more to start a replica.
  const cluster = await startCluster(t, { nginxConfig, network, replicas, env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: 120_000 })
  const users = Array.from({ length: CONNECTIONS }, (_, i) => ({ username: `load-${i}`, password: `load-password-${i}` }))
  for (const user of users) await cluster.addUser(user.username, user.password)

  for (let round = 1; round <= rollouts; round++) {
    const load = await startLoad(cluster, users)
    await sleep(1000)
    const rollout = await rollOut(cluster, pauseBetweenMs)
    await sleep(1000)
    const result = await load.stop()
    const exits = rollout.exits.map((exit) => `${exit.code ?? exit.signal} in ${Math.round(exit.ms)} ms`).join(', ')
    t.comment(`rollout ${round}: ${result.done} requests in ${result.seconds.toFixed(1)} s, ${result.failed} failed ${JSON.stringify(result.failures)}; exits: ${exits}; rollout took ${rollout.seconds.toFixed(1)} s`)
    if (guarantee === 'all') {
      t.equal(result.failed, 0, `rollout ${round}: none of ${result.done} requests failed`, { failures: result.failures })
    } else {
      const failedGets = Object.entries(result.failures).filter(([key]) => key.startsWith('GET ')).reduce((sum, [, count]) => sum + count, 0)
      t.equal(failedGets, 0, `rollout ${round}: no GET failed (POSTs lost: ${result.failed - failedGets})`, { failures: result.failures })
    }
    t.same(rollout.exits.map((exit) => exit.code), cluster.replicas.map(() => 0), `rollout ${round}: every replica exited 0`)
  }
}

t.test('rolling restart behind stock nginx with keep-alive connections to the replicas, waiting out fail_timeout', { skip: clusterTestSkip }, async (t) => {
  await rollingRestarts(t, STOCK_KEEPALIVE_NGINX_CONFIG, STOCK_FAIL_TIMEOUT_MS + 1000, '127.0.6')
})

t.test('rolling restart behind deploy/nginx.conf, the next replica stopped as soon as the last is ready', { skip: clusterTestSkip }, async (t) => {
  await rollingRestarts(t, undefined, 0, '127.0.7')
})

// deploy/compose.yaml's instructions for a third replica: its upstream line is a copy of the
// others, parameters included (the harness gives it the last server line's). One rollout: three
// replicas take three drains.
t.test('rolling restart of three replicas behind deploy/nginx.conf, the next replica stopped as soon as the last is ready', { skip: clusterTestSkip }, async (t) => {
  await rollingRestarts(t, undefined, 0, '127.0.25', 'all', 3, 1)
})

// A connection per request: the few that are still in the kernel's accept queue when a replica
// stops listening are reset, and stock nginx repeats only the idempotent ones (README).
t.test('rolling restart behind stock nginx without keep-alive, waiting out fail_timeout: no GET lost', { skip: clusterTestSkip }, async (t) => {
  await rollingRestarts(t, STOCK_NGINX_CONFIG, STOCK_FAIL_TIMEOUT_MS + 1000, '127.0.5', 'idempotent')
})
