/**
 * deploy/compose.yaml cannot be run here (no Docker engine), so it is held to what can be
 * checked: the Compose specification's own JSON schema (test/cluster/compose-spec.json, copied
 * from github.com/compose-spec/compose-spec, schema/compose-spec.json at 170098b, Apache-2.0),
 * and agreement with the repository: the files it names exist, config.ts accepts the replicas'
 * environment, deploy/nginx.conf balances exactly its replicas, Prometheus scrapes each of them and
 * Grafana reads that Prometheus. The nginx file itself runs in test/cluster/replicas.test.ts, the
 * Prometheus files and the dashboard's queries in test/cluster/prometheus.test.ts.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { BlockList, isIPv4 } from 'node:net'
import { join, resolve } from 'node:path'
import { Ajv } from 'ajv'
import t from 'tap'
import YAML from 'yaml'
import { ConfigError, ConfigSchema, readEnv } from '../../config.js'
import { repositoryRoot } from '../support/repository.js'
import { deployNginxConfigPath } from './harness.js'

const deployDirectory = join(repositoryRoot, 'deploy')
const composeFile = join(deployDirectory, 'compose.yaml')
const composeText = readFileSync(composeFile, 'utf8')
const nginxText = readFileSync(deployNginxConfigPath, 'utf8')

interface Service {
  image?: string
  build?: { context: string, dockerfile?: string }
  command?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
  networks?: string[] | Record<string, { ipv4_address?: string } | null>
  volumes?: string[]
  ports?: string[]
  healthcheck?: { test: string[] }
}
interface Compose {
  services: Record<string, Service>
  networks: Record<string, { ipam?: { config?: Array<{ subnet?: string }> } }>
}

// Compose reads YAML merge keys (`<<: *anchor`), which YAML 1.2 leaves out by default.
const compose = YAML.parse(composeText, { merge: true }) as Compose
const services = Object.entries(compose.services)
/** Services that run the image's own command, `serve`. */
const replicas = services.filter(([, service]) => service.build !== undefined && service.command === undefined)
const migrations = services.filter(([, service]) => service.command?.includes('migrate') === true)

/** What `docker compose` would substitute, with stand-ins for the operator's secrets. */
function interpolate (value: string): string {
  const standIns: Record<string, string> = { JWT_SECRET: 'x'.repeat(48), POSTGRES_PASSWORD: 'stand-in-password', GRAFANA_ADMIN_PASSWORD: 'stand-in-password' }
  return value.replace(/\$\{(\w+)(:?[-?][^}]*)?\}/g, (_match, name: string) => {
    const standIn = standIns[name]
    if (standIn === undefined) throw new Error(`compose.yaml uses \${${name}}, which this test has no stand-in for`)
    return standIn
  })
}

const addressOn = (service: Service, network: string): string | undefined =>
  Array.isArray(service.networks) ? undefined : service.networks?.[network]?.ipv4_address ?? undefined

t.test('deploy/compose.yaml is valid under the Compose specification schema', async (t) => {
  const schema = JSON.parse(readFileSync(join(repositoryRoot, 'test', 'cluster', 'compose-spec.json'), 'utf8'))
  // The schema names its draft by an https URL Ajv does not register; its formats (durations
  // such as 10s) are Compose's own, not JSON Schema's.
  const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false, validateFormats: false }).compile(schema)
  t.ok(validate(compose), 'valid', { errors: validate.errors })

  const misspelt = structuredClone(compose) as any
  misspelt.services.nginx.healthcheck.intervall = '5s'
  t.notOk(validate(misspelt), 'a misspelt key is caught (the check is not vacuous)')
  const unknownCondition = structuredClone(compose) as any
  unknownCondition.services.nginx.depends_on['meridian-1'].condition = 'service_ready'
  t.notOk(validate(unknownCondition), 'an unknown start condition is caught')
})

t.test('what it refers to exists', async (t) => {
  for (const [name, service] of services) {
    if (service.build !== undefined) {
      const dockerfile = resolve(deployDirectory, service.build.context, service.build.dockerfile ?? 'Dockerfile')
      t.equal(dockerfile, join(repositoryRoot, 'Dockerfile'), `${name} is built from the repository's Dockerfile`)
      t.ok(existsSync(dockerfile), `${name}: ${dockerfile} exists`)
    }
    for (const volume of service.volumes ?? []) {
      const [source = ''] = volume.split(':')
      if (source.startsWith('.') || source.startsWith('/')) t.ok(existsSync(resolve(deployDirectory, source)), `${name} mounts ${source}, which exists`)
    }
    for (const dependency of Object.keys(service.depends_on ?? {})) {
      t.ok(compose.services[dependency] !== undefined, `${name} depends on ${dependency}, which is a service`)
    }
  }
  const nginxMounts = compose.services.nginx?.volumes ?? []
  t.ok(nginxMounts.some((volume) => volume.startsWith('./nginx.conf:/etc/nginx/nginx.conf')), 'nginx runs deploy/nginx.conf')
})

t.test('the replicas share one environment that config.ts accepts', async (t) => {
  t.ok(replicas.length >= 2, `two or more replicas (${replicas.map(([name]) => name).join(', ')})`)
  const known = Object.keys(ConfigSchema.properties)
  const [, first] = replicas[0] ?? []
  for (const [name, service] of [...replicas, ...migrations]) {
    const environment = service.environment ?? {}
    for (const variable of Object.keys(environment)) t.ok(known.includes(variable), `${name}: ${variable} is read by config.ts`)
    for (const variable of ['JWT_SECRET', 'DATABASE_URL', 'REDIS_URL', 'TRUST_PROXY']) {
      t.equal(environment[variable], first?.environment?.[variable], `${name}: ${variable} is the same as every replica's`)
    }
    const interpolated = Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, interpolate(value)]))
    // The image sets NODE_ENV=production, under which a missing JWT_SECRET is refused too.
    t.doesNotThrow(() => readEnv({ NODE_ENV: 'production', ...interpolated }), `${name}: config.ts accepts the environment`)
  }
  t.throws(() => readEnv({ NODE_ENV: 'production', ...first?.environment, JWT_SECRET: 'short' }), ConfigError, 'and would refuse a short JWT_SECRET')
  t.equal(migrations.length, 1, 'one service applies the schema')
})

t.test('the schema is applied first and nginx starts once the replicas are healthy', async (t) => {
  const [migrationName, migration] = migrations[0] ?? []
  t.equal(migration?.depends_on?.postgres?.condition, 'service_healthy', 'migrate waits for PostgreSQL')
  for (const [name, service] of replicas) {
    t.equal(service.depends_on?.[migrationName as string]?.condition, 'service_completed_successfully', `${name} starts after the schema is applied`)
    t.equal(service.depends_on?.redis?.condition, 'service_healthy', `${name} starts once Redis answers`)
    t.match(service.healthcheck?.test.join(' '), /\/health\/ready/, `${name} is healthy when /health/ready answers`)
    t.equal(compose.services.nginx?.depends_on?.[name]?.condition, 'service_healthy', `nginx waits for ${name}`)
  }
})

t.test('deploy/nginx.conf balances exactly the replicas, and TRUST_PROXY names nginx', async (t) => {
  const imagePort = /^ENV .*\bPORT=(\d+)/m.exec(readFileSync(join(repositoryRoot, 'Dockerfile'), 'utf8'))?.[1]
  t.ok(imagePort, 'the Dockerfile sets PORT')
  const upstreams = [...nginxText.matchAll(/upstream\s+(meridian\w*)\s*\{([^}]*)\}/g)]
  t.same(upstreams.map(([, name]) => name), ['meridian', 'meridian_database'], 'all routes, and those that need the database')
  for (const [, name, body] of upstreams) {
    const servers = [...(body as string).matchAll(/^\s*server\s+([^\s;]+)/gm)].map((match) => match[1])
    t.same(servers.sort(), replicas.map(([replica]) => `${replica}:${imagePort}`).sort(), `${name as string}: one server per replica, on the image port`)
  }

  const listen = /^\s*listen\s+(\d+)\s*;/m.exec(nginxText)?.[1]
  t.ok(compose.services.nginx?.ports?.some((port) => port.endsWith(`:${listen}`)), `the published port reaches nginx's listen port ${listen}`)

  const [networkName, network] = Object.entries(compose.networks)[0] ?? []
  const subnet = network?.ipam?.config?.[0]?.subnet ?? ''
  const [subnetAddress = '', prefix = ''] = subnet.split('/')
  const inSubnet = new BlockList()
  inSubnet.addSubnet(subnetAddress, Number(prefix))
  const nginxAddress = addressOn(compose.services.nginx as Service, networkName as string)
  t.ok(nginxAddress !== undefined && isIPv4(nginxAddress) && inSubnet.check(nginxAddress), `nginx has a fixed address in ${subnet}`)
  const replicaAddresses = replicas.map(([, service]) => addressOn(service, networkName as string))
  t.ok(replicaAddresses.every((address) => address !== undefined && inSubnet.check(address)), 'so has every replica (nginx resolves their names once)')
  t.equal(new Set([nginxAddress, ...replicaAddresses]).size, replicas.length + 1, 'all distinct')
  for (const [name, service] of replicas) t.equal(service.environment?.TRUST_PROXY, nginxAddress, `${name} trusts nginx's address, and only it`)
})

t.test('the instructions for another replica keep every parameter of the upstream server lines', async (t) => {
  const comments = composeText.split('\n').filter((line) => line.trimStart().startsWith('#')).join('\n')
  const instructed = [...comments.matchAll(/server\s+(meridian-\d+:\d+)([^;`]*);/g)]
  const upstreams = [...nginxText.matchAll(/upstream\s+(meridian\w*)\s*\{([^}]*)\}/g)]
  t.equal(instructed.length, upstreams.length, 'deploy/compose.yaml gives a line to add to each upstream block')
  for (const [index, [, name, body]] of upstreams.entries()) {
    const shippedParameters = [...(body as string).matchAll(/^\s*server\s+[^\s;]+([^;]*);/gm)].map((match) => (match[1] as string).trim())
    t.equal(new Set(shippedParameters).size, 1, `${name as string}: every shipped replica has the same parameters`)
    const [line, address, parameters] = instructed[index] ?? []
    t.equal((parameters ?? '').trim(), shippedParameters[0], `\`${line ?? ''}\` keeps ${name as string}'s ${shippedParameters[0] ?? ''}`)
    t.notOk(replicas.some(([replica]) => address === `${replica}:3000`), `${address ?? ''} is not already a replica`)
  }
})

const hasComposePlugin = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0
t.test('docker compose config accepts it', { skip: hasComposePlugin ? false : 'skipped: the docker compose plugin is not installed' }, async (t) => {
  const result = spawnSync('docker', ['compose', '-f', composeFile, 'config', '--quiet'], {
    env: { ...process.env, JWT_SECRET: 'x'.repeat(48), POSTGRES_PASSWORD: 'stand-in-password' },
    encoding: 'utf8'
  })
  t.equal(result.status, 0, result.stderr)
})

t.test('Prometheus runs deploy/prometheus and scrapes every replica; Grafana is provisioned from deploy/grafana and reads that Prometheus', async (t) => {
  const prometheus = compose.services.prometheus
  t.ok(prometheus?.volumes?.includes('./prometheus:/etc/prometheus:ro'), 'Prometheus mounts deploy/prometheus')
  t.ok(prometheus?.command?.includes('--config.file=/etc/prometheus/prometheus.yml'), 'and runs its prometheus.yml')
  const scrapeConfig = YAML.parse(readFileSync(join(deployDirectory, 'prometheus', 'prometheus.yml'), 'utf8')) as {
    global: { scrape_interval: string }, scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>
  }
  const metricsPort = /^ENV .*\bMETRICS_PORT=(\d+)/m.exec(readFileSync(join(repositoryRoot, 'Dockerfile'), 'utf8'))?.[1]
  t.ok(metricsPort, 'the Dockerfile sets METRICS_PORT')
  const targets = scrapeConfig.scrape_configs.flatMap((job) => job.static_configs.flatMap((config) => config.targets))
  t.same(targets.sort(), replicas.map(([name]) => `${name}:${metricsPort}`).sort(), 'one target per replica, on the image\'s metrics port')

  const grafana = compose.services.grafana
  const provisioning = join(deployDirectory, 'grafana', 'provisioning')
  t.ok(grafana?.volumes?.includes('./grafana/provisioning:/etc/grafana/provisioning:ro'), 'Grafana mounts deploy/grafana/provisioning')
  const { datasources: [datasource] } = YAML.parse(readFileSync(join(provisioning, 'datasources', 'prometheus.yaml'), 'utf8')) as {
    datasources: Array<{ uid: string, type: string, url: string, jsonData: { timeInterval: string } }>
  }
  t.equal(datasource?.type, 'prometheus')
  t.equal(datasource?.url, 'http://prometheus:9090', 'its datasource is the prometheus service, on Prometheus\'s port')
  t.equal(datasource?.jsonData.timeInterval, scrapeConfig.global.scrape_interval, 'with the scrape interval, which $__rate_interval is made of')
  const { providers: [provider] } = YAML.parse(readFileSync(join(provisioning, 'dashboards', 'meridian.yaml'), 'utf8')) as {
    providers: Array<{ options: { path: string } }>
  }
  t.ok(grafana?.volumes?.includes(`./grafana/dashboards:${provider?.options.path}:ro`), 'the dashboards are mounted where the provider reads them')
  const dashboard = JSON.parse(readFileSync(join(deployDirectory, 'grafana', 'dashboards', 'meridian.json'), 'utf8')) as {
    panels: Array<{ title: string, datasource: { uid: string }, targets: Array<{ datasource: { uid: string } }> }>
  }
  for (const panel of dashboard.panels) {
    t.same([panel.datasource, ...panel.targets.map((target) => target.datasource)].map((source) => source.uid).filter((uid) => uid !== datasource?.uid), [],
      `${panel.title}: every query on the provisioned datasource`)
  }
})

t.test('the dashboard\'s panels have unique ids, fit the 24-column grid without overlapping, and say what they show', async (t) => {
  const { panels } = JSON.parse(readFileSync(join(deployDirectory, 'grafana', 'dashboards', 'meridian.json'), 'utf8')) as {
    panels: Array<{ id: number, title: string, description: string, gridPos: { x: number, y: number, w: number, h: number }, targets: Array<{ refId: string }> }>
  }
  t.equal(new Set(panels.map((panel) => panel.id)).size, panels.length, 'unique ids')
  const taken = new Set<string>()
  for (const { title, description, gridPos: { x, y, w, h }, targets } of panels) {
    t.ok(x >= 0 && w > 0 && x + w <= 24, `${title}: within the grid`)
    const cells = Array.from({ length: w * h }, (_, i) => `${x + (i % w)},${y + Math.floor(i / w)}`)
    t.notOk(cells.some((cell) => taken.has(cell)), `${title}: overlaps no other panel`)
    for (const cell of cells) taken.add(cell)
    t.ok(description.length > 20, `${title}: described`)
    t.equal(new Set(targets.map((target) => target.refId)).size, targets.length, `${title}: its queries have distinct refIds`)
  }
})

t.test('the guide\'s commands name the services, user and database the file has', async (t) => {
  const guide = readFileSync(join(repositoryRoot, 'docs', 'operations.md'), 'utf8')
  const postgres = compose.services.postgres?.environment ?? {}
  const inContainer = [...guide.matchAll(/docker compose exec -T postgres [^`\n]+/g)].map(([line]) => line)
  t.ok(inContainer.length >= 4, 'backup, and restore into an empty database (test/cli/backup.test.ts runs them)')
  for (const line of inContainer) {
    t.match(line, ` -U ${postgres.POSTGRES_USER ?? '?'} `, `${line}: the file's POSTGRES_USER`)
    t.ok(line.includes(` -d ${postgres.POSTGRES_DB ?? '?'} `) || line.endsWith(` ${postgres.POSTGRES_DB ?? '?'}`), `${line}: the file's POSTGRES_DB`)
  }
  const named = [...guide.matchAll(/docker compose (?:up -d --no-deps|ps|stop|run --rm) ([\w -]+)/g)].flatMap(([, names]) => names!.trim().split(/\s+/))
  t.ok(named.length > 0)
  for (const name of named) t.ok(name in compose.services, `the guide's \`docker compose … ${name}\` is a service of the file`)
  const stopped = /docker compose stop ([\w -]+)/.exec(guide)?.[1]?.trim().split(/\s+/) ?? []
  t.same(replicas.map(([name]) => name).filter((name) => !stopped.includes(name)), [], 'the checklist stops every replica before a restore')
})
