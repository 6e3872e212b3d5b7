import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Cluster } from './harness.js'
import { startLoad, type LoadResult } from './load.js'

/** A replica's start takes 1 s on a quiet machine, 15 s or more on a shared one under load. */
export const READY_TIMEOUT_MS = 120_000

/**
 * How long after a replica was ready a kill meets nginx past its bench of that replica, for an
 * upstream `fail_timeout`. nginx counts the bench in whole seconds (`ngx_time()`): it lasts up
 * to a second longer than `fail_timeout` after the last failed attempt, which comes before the
 * replica listens (3.0 s for `fail_timeout=2s`, measured), and then the other requests still
 * pass the replica by until the first one sent back to it has answered. A kill at exactly
 * `fail_timeout` + 1 s once met that (10 requests answered 503 in CI). Half a second to spare.
 */
export const pastBenchMs = (failTimeoutMs: number): number => failTimeoutMs + 1500

export const describeLoad = (result: LoadResult) =>
  `${result.done} requests in ${result.seconds.toFixed(1)} s, ${result.failed} failed ${JSON.stringify(result.failures)}`

/**
 * How long after a rollout the cluster is exposed: replica 0 restarted (SIGTERM, start, ready),
 * then replica 1 killed `killAfterMs` after that. While nginx still benches replica 0 for the
 * attempts that failed while it was down, it has no replica to hand replica 1's requests to.
 */
export async function killAfterRestart (t: Test, cluster: Cluster, users: Array<{ username: string, password: string }>, killAfterMs: number): Promise<LoadResult> {
  const load = await startLoad(cluster, users)
  await sleep(1000)
  await cluster.stopReplica(0)
  await cluster.startReplica(0)
  const readyAt = performance.now()
  await sleep(killAfterMs)
  const killedAt = performance.now()
  await cluster.stopReplica(1, 'SIGKILL')
  await sleep(3000)
  await cluster.startReplica(1)
  await sleep(1000)
  const result = await load.stop()
  const first = result.failureTimes[0]
  const last = result.failureTimes.at(-1)
  const span = first === undefined || last === undefined ? 'none' : `from ${((first - killedAt) / 1000).toFixed(2)} s to ${((last - killedAt) / 1000).toFixed(2)} s after the kill`
  t.comment(`killed ${((killedAt - readyAt) / 1000).toFixed(1)} s after replica 0 was ready: ${describeLoad(result)}; failures ${span}`)
  return result
}

/**
 * Until nginx has answered 20 GETs in a row from a replica: the benches of the last window are
 * over in the workers the probes reached. A kill is then measured from a steady state, as its
 * load's logins need (CI saw them answered 502, "no live upstreams", after a fixed wait).
 */
export async function untilBalancerServes (cluster: Cluster, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (let inARow = 0; inARow < 20;) {
    if (performance.now() > deadline) throw new Error(`nginx did not answer 20 requests in a row within ${timeoutMs} ms`)
    const answer = await cluster.request('/health/live').catch(() => undefined)
    inARow = answer?.status === 200 ? inARow + 1 : 0
    await sleep(50)
  }
}
