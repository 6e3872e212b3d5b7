import t from 'tap'
import { clusterTestSkip, startCluster, STOCK_NGINX_CONFIG } from './harness.js'
import { addLoadUsers, rollingRestarts } from './rollout.js'

/**
 * Rolling restarts behind nginx as most guides write it (the README's "Other balancers"), on one
 * cluster whose nginx is reloaded with each configuration. Stock nginx benches a replica that
 * failed once for its default `fail_timeout`, so each next replica waits that out.
 */
const STOCK_FAIL_TIMEOUT_MS = 10_000
/** Stock nginx with keep-alive connections to the replicas, as most guides write it. */
const STOCK_KEEPALIVE_NGINX_CONFIG = STOCK_NGINX_CONFIG
  .replace('server replica:3000;', 'server replica:3000;\n    keepalive 16;')
  .replace('proxy_pass http://meridian;', 'proxy_pass http://meridian;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";')

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
