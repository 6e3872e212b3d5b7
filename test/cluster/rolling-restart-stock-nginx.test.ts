import t from 'tap'
import { clusterTestSkip, startCluster, STOCK_FAIL_TIMEOUT_MS, STOCK_KEEPALIVE_NGINX_CONFIG, STOCK_NGINX_CONFIG } from './harness.js'
import { addLoadUsers } from './load.js'
import { rollingRestarts } from './rollout.js'

/**
 * Rolling restarts behind nginx as most guides write it (the README's "Other balancers"), on one
 * cluster whose nginx is reloaded with each configuration. Stock nginx benches a replica that
 * failed once for its default `fail_timeout`, so each next replica waits that out.
 */
t.test('rolling restarts behind stock nginx, waiting out fail_timeout between replicas', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { nginxConfig: STOCK_KEEPALIVE_NGINX_CONFIG, network: '127.0.6', env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: 120_000 })
  const users = await addLoadUsers(cluster)

  await t.test('with keep-alive connections to the replicas: no request lost', async (t) => {
    await rollingRestarts(t, cluster, users, STOCK_FAIL_TIMEOUT_MS + 1000)
  })

  // A connection per request: the few that are still in the kernel's accept queue when a replica
  // stops listening are reset, and stock nginx repeats only the idempotent ones (README).
  await t.test('without keep-alive: no GET lost', async (t) => {
    await cluster.reloadBalancer(STOCK_NGINX_CONFIG)
    await rollingRestarts(t, cluster, users, STOCK_FAIL_TIMEOUT_MS + 1000, 'idempotent')
  })
})
