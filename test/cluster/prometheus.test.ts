import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { repositoryRoot } from '../repository.js'
import { clusterTestSkip, freePort, httpRequest, startCluster, type Endpoint } from './harness.js'

const PROMETHEUS = process.env.PROMETHEUS ?? '/usr/bin/prometheus'
const deployDirectory = join(repositoryRoot, 'deploy', 'prometheus')

interface Rule { alert?: string, expr: string }
const replicaDownExpression = (parse(readFileSync(join(deployDirectory, 'alerts.yml'), 'utf8')) as { groups: Array<{ rules: Rule[] }> })
  .groups.flatMap((group) => group.rules).find((rule) => rule.alert === 'MeridianReplicaDown')?.expr

interface QueryAnswer { status: string, data: { result: Array<{ metric: Record<string, string>, value: [number, string] }> } }

async function query (prometheus: Endpoint, expression: string): Promise<QueryAnswer['data']['result']> {
  const answer = await httpRequest(prometheus, `/api/v1/query?query=${encodeURIComponent(expression)}`, { agent: false })
  if (answer.status !== 200) throw new Error(`Prometheus answered ${answer.status}: ${answer.body}`)
  return (answer.json() as QueryAnswer).data.result
}

/** Polls `expression` until `accept` takes its result; rejects with the last result after `timeoutMs`. */
async function queryUntil (prometheus: Endpoint, expression: string, accept: (result: QueryAnswer['data']['result']) => boolean, timeoutMs = 30_000): Promise<QueryAnswer['data']['result']> {
  const deadline = performance.now() + timeoutMs
  let result: QueryAnswer['data']['result'] = []
  while (performance.now() < deadline) {
    result = await query(prometheus, expression).catch(() => [])
    if (accept(result)) return result
    await sleep(250)
  }
  throw new Error(`${expression} never gave the expected result; last: ${JSON.stringify(result)}`)
}

t.test('a real Prometheus with deploy/prometheus scrapes both replicas; the replica-down expression fires for a stopped one', { skip: clusterTestSkip }, async (t) => {
  t.ok(replicaDownExpression, 'alerts.yml has MeridianReplicaDown')
  const network = '127.0.28'
  // METRICS_HOST is each replica's HOST: one port serves both, on their distinct addresses.
  const metricsPort = await freePort(`${network}.3`)
  const cluster = await startCluster(t, { network, env: { METRICS_PORT: String(metricsPort), LOG_LEVEL: 'warn' }, readyTimeoutMs: 90_000 })
  const targets = cluster.replicas.map((replica) => `${replica.endpoint.host}:${metricsPort}`)

  // The shipped configuration, with this cluster's targets and a quicker schedule.
  const directory = join(cluster.directory, 'prometheus')
  mkdirSync(directory)
  const config = parse(readFileSync(join(deployDirectory, 'prometheus.yml'), 'utf8'))
  config.global = { scrape_interval: '1s', evaluation_interval: '1s' }
  config.rule_files = [join(deployDirectory, 'alerts.yml')]
  config.scrape_configs[0].static_configs = [{ targets }]
  writeFileSync(join(directory, 'prometheus.yml'), stringify(config))

  const prometheus = { host: `${network}.20`, port: await freePort(`${network}.20`) }
  const child = spawn(PROMETHEUS, [
    `--config.file=${join(directory, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(directory, 'data')}`,
    `--web.listen-address=${prometheus.host}:${prometheus.port}`
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
    if (!t.passing()) t.comment(`prometheus log:\n${log.split('\n').slice(-20).join('\n')}`)
  })

  const up = await queryUntil(prometheus, 'up{job="meridian"} == 1', (result) => result.length === 2)
  t.same(up.map((series) => series.metric.instance).sort(), [...targets].sort(), 'both replicas scraped and up')
  t.same(await query(prometheus, replicaDownExpression as string), [], 'the replica-down expression is quiet')
  const ready = await queryUntil(prometheus, 'meridian_ready', (result) => result.length === 2)
  t.same(ready.map((series) => series.value[1]), ['1', '1'], 'both ready')

  await cluster.stopReplica(1)
  const down = await queryUntil(prometheus, replicaDownExpression as string, (result) => result.length > 0)
  t.same(down.map((series) => series.metric.instance), [targets[1]], 'the expression fires for the stopped replica, and only for it')
  const alerts = await queryUntil(prometheus, 'ALERTS{alertname="MeridianReplicaDown"}', (result) => result.length > 0)
  t.same(alerts.map((series) => [series.metric.instance, series.metric.alertstate]), [[targets[1], 'pending']], 'the alert is pending (it fires after its minute)')
})
