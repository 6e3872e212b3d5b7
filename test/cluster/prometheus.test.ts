import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { repositoryRoot } from '../support/repository.js'
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

interface DashboardPanel { title: string, targets: Array<{ expr: string, legendFormat: string }> }
const dashboard = JSON.parse(readFileSync(join(repositoryRoot, 'deploy', 'grafana', 'dashboards', 'meridian.json'), 'utf8')) as { panels: DashboardPanel[] }

/** The test's scrape interval; Grafana's $__rate_interval is at least four of them. */
const SCRAPE_INTERVAL_SECONDS = 1

/** A panel's query as Grafana sends it: its one variable replaced; any other would be a mistake. */
function asGrafanaSends (expression: string): string {
  const sent = expression.replaceAll('$__rate_interval', `${4 * SCRAPE_INTERVAL_SECONDS}s`)
  if (sent.includes('$')) throw new Error(`a variable the dashboard does not define: ${expression}`)
  return sent
}

t.test('a real Prometheus with deploy/prometheus scrapes both replicas', { skip: clusterTestSkip }, async (t) => {
  t.ok(replicaDownExpression, 'alerts.yml has MeridianReplicaDown')
  const network = '127.0.28'
  // METRICS_HOST is each replica's HOST: one port serves both, on their distinct addresses.
  const metricsPort = await freePort(`${network}.3`)
  // A low fair share, so that one client is refused and the dashboard's refusals have a series.
  const requestsPerWindow = 20
  const cluster = await startCluster(t, {
    network,
    env: { METRICS_PORT: String(metricsPort), LOG_LEVEL: 'warn', RATE_LIMIT_REQUESTS: String(requestsPerWindow) },
    readyTimeoutMs: 90_000
  })
  const targets = cluster.replicas.map((replica) => `${replica.endpoint.host}:${metricsPort}`)

  // The shipped configuration, with this cluster's targets and a quicker schedule.
  const directory = join(cluster.directory, 'prometheus')
  mkdirSync(directory)
  const config = parse(readFileSync(join(deployDirectory, 'prometheus.yml'), 'utf8'))
  config.global = { scrape_interval: `${SCRAPE_INTERVAL_SECONDS}s`, evaluation_interval: '1s' }
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

  await t.test('every query of the Grafana dashboard returns series', async (t) => {
    // What the panels show: each route, a refused password, an unrouted request, one client past its share.
    await cluster.addUser('ada', 'ada-password')
    const { access_token: token } = await cluster.login('ada', 'ada-password')
    t.equal((await cluster.request(`/api/user/list?access_token=${encodeURIComponent(token)}`)).status, 200)
    t.equal((await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=52.5&longitude=13.4')).status, 200)
    t.equal((await cluster.request('/api/markdown/parse', { json: { markdown: '# Hello' } })).status, 200)
    t.equal((await cluster.request('/wp-login.php')).status, 404)
    for (let i = 0; i < 5; i++) await cluster.request('/api/auth/login', { json: { username: 'ada', password: 'wrong' } })
    t.equal((await cluster.request('/api/auth/login', { json: { username: 'ada', password: 'ada-password' } })).status, 429, 'the failed-login limit')
    const flooder = cluster.otherClientAddresses[0] as string
    const statuses = []
    // Three shares: the replicas share counts in batches, so one may let a few past the share before it hears.
    for (let i = 0; i < 3 * requestsPerWindow; i++) statuses.push((await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0', { from: flooder })).status)
    t.ok(statuses.includes(429), 'a client past its fair share')

    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const sent = asGrafanaSends(target.expr)
        const result = await queryUntil(prometheus, sent, (series) => series.length > 0).catch(() => [])
        t.ok(result.length > 0, `${panel.title} (${target.legendFormat}): ${result.length} series`, { query: sent })
      }
    }
  })

  await t.test('the replica-down expression fires for a stopped replica', async (t) => {
    await cluster.stopReplica(1)
    const down = await queryUntil(prometheus, replicaDownExpression as string, (result) => result.length > 0)
    t.same(down.map((series) => series.metric.instance), [targets[1]], 'the expression fires for the stopped replica, and only for it')
    const alerts = await queryUntil(prometheus, 'ALERTS{alertname="MeridianReplicaDown"}', (result) => result.length > 0)
    t.same(alerts.map((series) => [series.metric.instance, series.metric.alertstate]), [[targets[1], 'pending']], 'the alert is pending (it fires after its minute)')
  })
})
