import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { clusterTestSkip, startCluster, STOCK_FAIL_TIMEOUT_MS, STOCK_KEEPALIVE_NGINX_CONFIG } from './harness.js'
import { killAfterRestart, pastBenchMs, READY_TIMEOUT_MS, untilBalancerServes } from './faults.js'
import { addLoadUsers } from './load.js'

/**
 * A replica killed with SIGKILL behind stock nginx with keep-alive (the README's "Other
 * balancers"): inside the window after the other replica restarted, requests fail (nginx still
 * benches the restarted one for the attempts that failed while it was down); once its
 * `fail_timeout` has passed, only the POSTs caught on the killed connections do.
 */
t.test('stock nginx with keep-alive: a replica killed soon after the other one restarted, then once fail_timeout has passed', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { nginxConfig: STOCK_KEEPALIVE_NGINX_CONFIG, network: '127.0.23', env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: READY_TIMEOUT_MS })
  const users = await addLoadUsers(cluster)
  const inside = await killAfterRestart(t, cluster, users, 500)
  t.ok(inside.failed > 0, 'inside the window, requests fail (shown, not a goal)')
  // Replica 1 failed while it was down: wait out its bench before it is the only one left.
  await sleep(pastBenchMs(STOCK_FAIL_TIMEOUT_MS))
  await untilBalancerServes(cluster)
  const killAfterMs = pastBenchMs(STOCK_FAIL_TIMEOUT_MS)
  const outside = await killAfterRestart(t, cluster, users, killAfterMs)
  // Stock nginx never repeats a POST (no non_idempotent): one caught on the killed replica's
  // connection fails with 502.
  const lost = Object.fromEntries(Object.entries(outside.failures).filter(([key]) => !/^POST .* → 502$/.test(key)))
  t.same(lost, {}, `killed ${killAfterMs} ms after the restart, none of ${outside.done} requests failed but POSTs caught on the killed connections`)
})
