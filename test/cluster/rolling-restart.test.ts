import t from 'tap'
import { clusterTestSkip, startCluster } from './harness.js'
import { addLoadUsers } from './load.js'
import { assertNoTokensInLogs } from './log-secrets.js'
import { rollingRestarts } from './rollout.js'

// deploy/nginx.conf, with deploy/compose.yaml's instructions for a third replica: its upstream
// line is a copy of the others, parameters included (the harness gives it the last server
// line's). Three replicas take three drains; the next replica is stopped as soon as the last is
// ready, the tightest rollout an orchestrator does. Stock nginx: rolling-restart-stock-nginx.test.ts.
t.test('rolling restart of three replicas behind deploy/nginx.conf, the next replica stopped as soon as the last is ready', { skip: clusterTestSkip }, async (t) => {
  // A shared machine under load can take 15 s or more to start a replica.
  const cluster = await startCluster(t, { network: '127.0.25', replicas: 3, env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: 120_000 })
  await rollingRestarts(t, cluster, await addLoadUsers(cluster), 0)
  assertNoTokensInLogs(t, cluster.directory)
})
