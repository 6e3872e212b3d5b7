import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { balancerLog, linesOf, type Cluster, type Exit } from './harness.js'
import { startLoad } from './load.js'

/** Rolling restarts a test runs; once proves "none lost" with tens of thousands of requests. */
export const ROLLOUTS = Number(process.env.ROLLOUTS ?? 1)

interface Rollout { exits: Exit[], seconds: number }

/**
 * What a rollout must not lose: every request (`'all'`), or only those the balancer may repeat
 * (`'idempotent'`: stock nginx without keep-alive, see the README).
 */
export type Guarantee = 'all' | 'idempotent'

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

/** The requests each replica refused with a reason of its own ("Overloaded", a dependency away), counted by reason. */
function replicaRefusals (cluster: Cluster, from: number[]): string {
  return cluster.replicas.map((replica, index) => {
    const reasons: Record<string, number> = {}
    for (const line of linesOf(replica.logFile, from[index])) {
      if (!line.includes('"request not served"')) continue
      const reason = (JSON.parse(line) as { reason?: unknown }).reason
      reasons[String(reason)] = (reasons[String(reason)] ?? 0) + 1
    }
    return `replica ${replica.index}: ${JSON.stringify(reasons)}`
  }).join('; ')
}

/**
 * Rolling restarts under a mixed load through nginx: every replica in turn gets SIGTERM, is
 * started again and answers ready, then the next. Goal: no failed request (or no failed GET),
 * every exit 0.
 */
export async function rollingRestarts (t: Test, cluster: Cluster, users: Array<{ username: string, password: string }>, pauseBetweenMs: number, guarantee: Guarantee = 'all', rollouts = ROLLOUTS): Promise<void> {
  for (let round = 1; round <= rollouts; round++) {
    const logFrom = balancerLog(cluster).length
    const replicaLogsFrom = cluster.replicas.map((replica) => linesOf(replica.logFile).length)
    const load = await startLoad(cluster, users)
    await sleep(1000)
    const rollout = await rollOut(cluster, pauseBetweenMs)
    await sleep(1000)
    const result = await load.stop()
    const exits = rollout.exits.map((exit) => `${exit.code ?? exit.signal} in ${Math.round(exit.ms)} ms`).join(', ')
    t.comment(`rollout ${round}: ${result.done} requests in ${result.seconds.toFixed(1)} s, ${result.failed} failed ${JSON.stringify(result.failures)}; exits: ${exits}; rollout took ${rollout.seconds.toFixed(1)} s`)
    if (result.failed > 0) {
      const failedAnswers = balancerLog(cluster, logFrom).filter((line) => /" (?!200 )\d{3} /.test(line))
      t.comment(`rollout ${round}, nginx's first failed answers:\n${failedAnswers.slice(0, 8).join('\n')}`)
      t.comment(`rollout ${round}, requests the replicas refused themselves: ${replicaRefusals(cluster, replicaLogsFrom)}`)
    }
    if (guarantee === 'all') {
      t.equal(result.failed, 0, `rollout ${round}: none of ${result.done} requests failed`, { failures: result.failures })
    } else {
      const failedGets = Object.entries(result.failures).filter(([key]) => key.startsWith('GET ')).reduce((sum, [, count]) => sum + count, 0)
      t.equal(failedGets, 0, `rollout ${round}: no GET failed (POSTs lost: ${result.failed - failedGets})`, { failures: result.failures })
    }
    t.same(rollout.exits.map((exit) => exit.code), cluster.replicas.map(() => 0), `rollout ${round}: every replica exited 0`)
  }
}
