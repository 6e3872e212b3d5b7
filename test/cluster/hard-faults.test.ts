import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { balancerLog, clusterTestSkip, startCluster } from './harness.js'
import { describeLoad, killAfterRestart, pastBenchMs, READY_TIMEOUT_MS, untilBalancerServes } from './faults.js'
import { addLoadUsers, startLoad } from './load.js'
import { assertNoTokensInLogs } from './log-secrets.js'

/**
 * Hard faults behind deploy/nginx.conf under the mixed load of the rollout test: a replica killed
 * with SIGKILL (no drain, its connections reset with requests on them) and started again, from a
 * steady state and soon after the other replica restarted. Stock nginx: hard-faults-stock-nginx.test.ts.
 */
/** deploy/nginx.conf's `fail_timeout`: nginx benches a replica this long (and up to 1 s more) after one failed attempt. */
const DEPLOY_FAIL_TIMEOUT_MS = 2000

t.test('a replica killed with SIGKILL under load behind deploy/nginx.conf', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { network: '127.0.21', env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: READY_TIMEOUT_MS })
  const users = await addLoadUsers(cluster)

  await t.test('from a steady state: no request fails, and it serves again once restarted', async (t) => {
    const killed = cluster.replicas[1]
    if (killed === undefined) throw new Error('no replica 1')
    const load = await startLoad(cluster, users)
    await sleep(2000)
    const exit = await cluster.stopReplica(killed.index, 'SIGKILL')
    t.same([exit.code, exit.signal], [null, 'SIGKILL'], 'replica 1 was killed, not stopped')
    await sleep(3000)
    await cluster.startReplica(killed.index)
    const restartedAt = balancerLog(cluster).length
    // Past its bench, so nginx has tried it again.
    await sleep(DEPLOY_FAIL_TIMEOUT_MS + 2000)
    const result = await load.stop()
    t.comment(`SIGKILL from a steady state: ${describeLoad(result)}`)
    t.equal(result.failed, 0, `none of ${result.done} requests failed`, { failures: result.failures })

    const address = `upstream=${killed.endpoint.host}:${killed.endpoint.port}`
    const servedByRestarted = balancerLog(cluster, restartedAt).filter((line) => line.endsWith(address) || line.includes(`${address} `)).length
    t.comment(`after its restart, replica 1 answered ${servedByRestarted} of ${balancerLog(cluster, restartedAt).length} requests through nginx`)
    t.ok(servedByRestarted > 0, 'the restarted replica takes traffic through nginx again')
    t.equal((await cluster.requestReplica(killed.index, '/health/ready')).status, 200, 'and answers ready itself')
  })

  // deploy/nginx.conf repeats a POST caught on the killed replica's connection, so nothing may
  // fail once the restarted replica's bench (fail_timeout) is over.
  await t.test('killed once fail_timeout has passed since the other replica restarted: no request fails', async (t) => {
    await untilBalancerServes(cluster)
    const killAfterMs = pastBenchMs(DEPLOY_FAIL_TIMEOUT_MS)
    const result = await killAfterRestart(t, cluster, users, killAfterMs)
    t.same(result.failures, {}, `killed ${killAfterMs} ms after the restart, none of ${result.done} requests failed`)
  })

  // nginx's error log quotes the request line of every attempt that met the killed replica.
  await t.test('after a restart and two kills, no log holds a token', async (t) => {
    assertNoTokensInLogs(t, cluster.directory)
  })
})
