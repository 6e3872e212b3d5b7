/**
 * A real deployment on this machine for the cluster tests: N replicas (`node dist/cli.js serve`,
 * built by `pretest`) on a PostgreSQL database and a Redis db index of their own, behind nginx
 * running deploy/nginx.conf with only its addresses replaced. Client, balancer and replicas sit
 * on distinct loopback addresses, so the replicas' view of "the client address" is tested for
 * real. Everything started here is stopped, and the database and Redis db dropped, when the test
 * that started the cluster ends, whether it passed or not.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { connect } from 'node:net'
import { freePort } from '../support/free-port.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { onExit } from 'signal-exit'
import type { Test } from 'tap'
import { type CliResult, runMeridian } from '../support/meridian.js'
import { createPostgresDatabase } from '../support/postgres.js'
import { cliPath, repositoryRoot } from '../support/repository.js'
import { switchSkip } from '../support/requirements.js'
import { type Endpoint, httpRequest, type HttpAnswer, type RequestOptions } from '../support/http-request.js'

export { type Endpoint, httpRequest, type HttpAnswer, type RequestOptions }

/** `{ skip }` for a tap test that needs the cluster. */
export const clusterTestSkip = switchSkip('MERIDIAN_CLUSTER_TEST', 'the cluster group (replicas behind nginx on PostgreSQL and Redis)')

export const deployNginxConfigPath = join(repositoryRoot, 'deploy', 'nginx.conf')
const NGINX = process.env.NGINX ?? '/usr/sbin/nginx'

/** The machine's servers, or the ones the test variables name. */
export const postgresBaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const redisBaseUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * nginx as commonly configured, none of deploy/nginx.conf's choices: no keep-alive to the
 * replicas, nginx's default retries and failure counting, the client's X-Forwarded-For kept and
 * nginx's peer appended.
 */
export const STOCK_NGINX_CONFIG = `
events {}
http {
  upstream meridian {
    server replica:3000;
  }
  server {
    listen 80;
    location / {
      proxy_pass http://meridian;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
}
`

/** Stock nginx with keep-alive connections to the replicas, as most guides write it. */
export const STOCK_KEEPALIVE_NGINX_CONFIG = STOCK_NGINX_CONFIG
  .replace('server replica:3000;', 'server replica:3000;\n    keepalive 16;')
  .replace('proxy_pass http://meridian;', 'proxy_pass http://meridian;\n      proxy_http_version 1.1;\n      proxy_set_header Connection "";')

/** nginx's default `fail_timeout`: a replica that failed once gets no requests for this long. */
export const STOCK_FAIL_TIMEOUT_MS = 10_000

export interface ClusterOptions {
  /** Number of replicas; 2 by default. */
  replicas?: number
  /**
   * The first three octets of the loopback addresses: the client is .10, the balancer .2, the
   * replicas .3, .4, …; 127.0.1 by default.
   */
  network?: string
  /**
   * The nginx configuration text; deploy/nginx.conf by default. Its one `listen` and the
   * `server` lines of `upstream meridian` are replaced by the cluster's addresses (each
   * replica keeps the parameters of the server line at its position, or of the last one).
   */
  nginxConfig?: string
  /**
   * The PostgreSQL server the cluster's database is created on (any database of it as the URL's
   * path); TEST_DATABASE_URL's server by default.
   */
  postgresUrl?: string
  /** Where the replicas (not the CLI) reach PostgreSQL, e.g. a TCP proxy the test controls; one per replica in order. */
  databaseVia?: Endpoint | Array<Endpoint | undefined>
  /** Where the replicas (not the CLI) reach Redis. */
  redisVia?: Endpoint
  /** More environment for every replica (and the CLI), e.g. `{ LOG_LEVEL: 'warn' }`. */
  env?: Record<string, string>
  /** Milliseconds a replica may take to be ready; 30 s by default. */
  readyTimeoutMs?: number
}

export interface Exit { code: number | null, signal: NodeJS.Signals | null, /** from the signal to the exit */ ms: number }

/** Starts a Node script that outlives this process (for clean-up as it exits). */
function runNodeDetached (script: string, args: string[]): void {
  spawn(process.execPath, ['-e', script, ...args], { cwd: repositoryRoot, detached: true, stdio: 'ignore' }).unref()
}

/** The lines of a file from line `from` on (none while it does not exist). */
export function linesOf (path: string, from = 0): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).slice(from) : []
}

/**
 * nginx's access log from line `from` on: in the shipped format behind deploy/nginx.conf, each
 * line listing the request's upstream attempts with their statuses; in the harness's otherwise.
 */
export function balancerLog (cluster: Cluster, from = 0): string[] {
  const shipped = join(cluster.directory, 'access-shipped.log')
  return linesOf(existsSync(shipped) ? shipped : join(cluster.directory, 'access.log'), from)
}

export { freePort }

async function acceptsConnections (target: Endpoint): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(target.port, target.host)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

/** Waits for `child` to exit; SIGKILL after `graceMs`. */
async function exitOf (child: ChildProcess, graceMs: number): Promise<{ code: number | null, signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode }
  const killer = setTimeout(() => { child.kill('SIGKILL') }, graceMs)
  const [code, signal] = await once(child, 'exit') as [number | null, NodeJS.Signals | null]
  clearTimeout(killer)
  return { code, signal }
}

/** The pids of `parent`'s child processes, from /proc. */
function childrenOf (parent: number): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent ? [Number(pid)] : []
    } catch {
      return [] // exited meanwhile
    }
  })
}

function isRunning (child: ChildProcess | undefined): boolean {
  return child !== undefined && child.exitCode === null && child.signalCode === null
}

/**
 * deploy/nginx.conf (or a variant) with the cluster's addresses and its own files: the addresses
 * RATE_LIMIT_EXEMPT names (`exemptAddresses`) among those its coarse per-client limit leaves alone, the `listen`
 * of its one server, the `server` lines of `upstream meridian`, the source address of its
 * connections to the replicas, and logs and temporary files in `directory` (Debian's nginx keeps
 * those under /var by default).
 */
export function templateNginxConfig (text: string, balancer: Endpoint, replicas: Endpoint[], directory: string, exemptAddresses?: string): string {
  // Comments go first, so that only directives are matched.
  let templated = text.replace(/#[^\n]*/g, '')
  const upstreams = [...templated.matchAll(/upstream\s+(meridian\w*)\s*\{([^}]*)\}/g)]
  if (!upstreams.some(([, name]) => name === 'meridian')) throw new Error('the nginx configuration has no `upstream meridian { … }` block')
  // Every `upstream meridian…` block (the database routes' too) lists the replicas.
  for (const [block, name, body] of upstreams) {
    const serverDirective = /(?<![\w-])server\s+[^\s;]+([^;]*);/g
    const parameters = [...(body as string).matchAll(serverDirective)].map((match) => (match[1] as string).trimEnd())
    if (parameters.length === 0) throw new Error(`\`upstream ${name as string}\` has no \`server\``)
    const servers = replicas.map((replica, index) =>
      `  server ${replica.host}:${replica.port}${parameters[Math.min(index, parameters.length - 1)] as string};`)
    const otherDirectives = (body as string).replace(serverDirective, '').trim()
    templated = templated.replace(block, () => `upstream ${name as string} {\n${servers.join('\n')}\n  ${otherDirectives}\n}`)
  }

  const listen = /(?<![\w-])listen\s+[^\s;]+([^;]*);/g
  const listens = templated.match(listen) ?? []
  if (listens.length !== 1) throw new Error(`the nginx configuration needs exactly one \`listen\`, not ${listens.length}`)
  templated = templated.replace(listen, (_directive, listenParameters: string) => `listen ${balancer.host}:${balancer.port}${listenParameters};`)

  // The file's own access log (in its format) goes to the run directory; a file without one gets
  // one there, in a format without the query (which carries tokens), instead of nginx's default.
  const accessLog = /(?<![\w-])access_log\s+(?!off\b)[^\s;]+/
  const hasAccessLog = accessLog.test(templated)
  templated = templated.replace(new RegExp(accessLog, 'g'), () => `access_log ${join(directory, 'access-shipped.log')}`)
  // So does its error log, at its own level; a file without one gets nginx's default level.
  const errorLog = /(?<![\w-])error_log\s+(?!stderr\b)[^\s;]+/
  templated = errorLog.test(templated)
    ? templated.replace(new RegExp(errorLog, 'g'), () => `error_log ${join(directory, 'error.log')}`)
    : `error_log ${join(directory, 'error.log')} error;\n${templated}`

  // The load of the tests comes from the client address: exempt from the balancer's coarse limit
  // per client, as RATE_LIMIT_EXEMPT exempts it from the replicas' (an operator's load test is).
  const exempt = (exemptAddresses ?? '').split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => `\n    ${entry} 1;`).join('')
  templated = templated.replace(/(geo\s+\$fair_share_exempt\s*\{[^}]*default\s+0;)/, (block) => `${block}${exempt}`)

  const files = [
    // On one machine the kernel would pick 127.0.0.1 to reach the replicas; a balancer of its own
    // has one address, the one TRUST_PROXY names.
    `proxy_bind ${balancer.host};`,
    ...hasAccessLog
      ? []
      : ['log_format harness \'$remote_addr [$time_local] "$request_method $uri" $status upstream=$upstream_addr\';', `access_log ${join(directory, 'access.log')} harness;`],
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${join(directory, `${kind}_temp`)};`)
  ]
  const http = /(?<![\w-])http\s*\{/
  if (!http.test(templated)) throw new Error('the nginx configuration has no `http { … }` block')
  return templated.replace(http, (block) => `${block}\n  ${files.join('\n  ')}\n`)
}

export class Replica {
  child: ChildProcess | undefined
  /** Every start's exit, in order. */
  readonly exits: Exit[] = []

  constructor (
    readonly index: number,
    readonly endpoint: Endpoint,
    private readonly env: Record<string, string>,
    /** stdout and stderr of every start of this replica, appended. */
    readonly logFile: string,
    private readonly readyTimeoutMs: number
  ) {}

  get running (): boolean { return isRunning(this.child) }

  /** Starts `node dist/cli.js serve` and waits for /health/ready to answer 200. */
  async start (): Promise<void> {
    if (this.running) throw new Error(`replica ${this.index} is already running`)
    const log = openSync(this.logFile, 'a')
    try {
      this.child = spawn(process.execPath, [cliPath, 'serve'], { env: this.env, stdio: ['ignore', log, log] })
    } finally {
      closeSync(log)
    }
    const child = this.child
    const deadline = performance.now() + this.readyTimeoutMs
    while (performance.now() < deadline) {
      if (!isRunning(child)) throw new Error(`replica ${this.index} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${this.logTail()}`)
      const ready = await httpRequest(this.endpoint, '/health/ready', { agent: false, timeoutMs: 1000 }).catch(() => undefined)
      if (ready?.status === 200) return
      await sleep(50)
    }
    throw new Error(`replica ${this.index} was not ready within ${this.readyTimeoutMs} ms:\n${this.logTail()}`)
  }

  /** Sends `signal` (SIGTERM by default) and waits for the exit; SIGKILL after `graceMs`. */
  async stop (signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<Exit> {
    const child = this.child
    if (child === undefined || !isRunning(child)) throw new Error(`replica ${this.index} is not running`)
    const sent = performance.now()
    child.kill(signal)
    const exit = { ...await exitOf(child, graceMs), ms: performance.now() - sent }
    this.exits.push(exit)
    return exit
  }

  /** The last lines this replica wrote, for a failure message. */
  logTail (lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)'
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  }
}

export interface Cluster {
  /** nginx, where clients send requests. */
  balancer: Endpoint
  /** The address requests come from unless told otherwise; exempt from the fair-share limits (RATE_LIMIT_EXEMPT), as a load test is. */
  clientAddress: string
  /** Spare client addresses on the same network (.11, .12, …), distinct from every other, and limited. */
  otherClientAddresses: string[]
  replicas: Replica[]
  /** This run's own database (direct, not through `databaseVia`). */
  databaseUrl: string
  /** This run's own Redis db (direct, not through `redisVia`). */
  redisUrl: string
  jwtSecret: string
  /** The environment each replica runs with. */
  replicaEnv: Record<string, string>
  /** The run's directory: nginx.conf, nginx's logs, each replica's log. */
  directory: string
  /** Through the balancer, from the client address unless `from` says otherwise. */
  request: (path: string, options?: RequestOptions) => Promise<HttpAnswer>
  /** Straight to replica `index`, from the client address unless `from` says otherwise. */
  requestReplica: (index: number, path: string, options?: RequestOptions) => Promise<HttpAnswer>
  /** `node dist/cli.js …args` with the replicas' environment (direct database), `input` on stdin. */
  cli: (args: string[], input?: string) => Promise<CliResult>
  /** A user added with the CLI. */
  addUser: (username: string, password: string, extra?: string[]) => Promise<void>
  /** Logs in and returns the token pair, through the balancer or on one replica. */
  login: (username: string, password: string, on?: number) => Promise<{ access_token: string, refresh_token: string }>
  stopReplica: (index: number, signal?: NodeJS.Signals) => Promise<Exit>
  startReplica: (index: number) => Promise<void>
  /** Tells nginx to reload its configuration (SIGHUP), e.g. after the test rewrote it. */
  reloadBalancer: (config?: string) => Promise<void>
  nginxErrorLog: () => string
}

/** A Redis db index no other run uses: claimed with a marker key on an empty db, flushed at the end. */
async function claimRedisDb (baseUrl: string, runId: string): Promise<{ url: string, redis: Redis }> {
  const probe = new Redis(baseUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  await probe.connect()
  const databases = Number((await probe.config('GET', 'databases') as string[])[1] ?? 16)
  await probe.quit()
  const indexes = Array.from({ length: databases - 1 }, (_, i) => i + 1).sort(() => Math.random() - 0.5)
  for (const index of indexes) {
    const redis = new Redis(baseUrl, { db: index, lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    const claimed = await redis.set('meridian-cluster-test:claim', runId, 'EX', 3600, 'NX')
    if (claimed === 'OK' && await redis.dbsize() === 1) {
      const url = new URL(baseUrl)
      url.pathname = `/${index}`
      return { url: url.toString(), redis }
    }
    if (claimed === 'OK') await redis.del('meridian-cluster-test:claim')
    await redis.quit()
  }
  throw new Error(`no free Redis db index at ${baseUrl}`)
}

/**
 * Starts a cluster for `t` and stops it when `t` ends. The schema is applied with
 * `meridian migrate` first, as deploy/compose.yaml does.
 */
export async function startCluster (t: Test, options: ClusterOptions = {}): Promise<Cluster> {
  const network = options.network ?? '127.0.1'
  const replicaCount = options.replicas ?? 2
  const runId = randomBytes(6).toString('hex')
  const cleanups: Array<() => Promise<void> | void> = []
  const children = new Set<ChildProcess>()
  const replicas: Replica[] = []
  /**
   * If the test process ends before the teardown has run (tap's timeout, a signal), what can be
   * done at once is done: servers killed, files removed, and a detached process drops the
   * database and empties the Redis db after this one is gone.
   */
  const lastResort: Array<() => void> = [() => {
    for (const child of [...children, ...replicas.map((replica) => replica.child)]) if (child !== undefined && isRunning(child)) child.kill('SIGKILL')
  }]
  const removeExitHook = onExit(() => {
    for (const undo of lastResort) {
      try {
        undo()
      } catch {}
    }
  })
  t.teardown(async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup()
      } catch (error) {
        t.comment(`cluster clean-up: ${String(error)}`)
      }
    }
    removeExitHook()
  })

  if (!existsSync(cliPath)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does it first)')
  if (!existsSync(NGINX)) throw new Error(`nginx is not at ${NGINX}: apt-get install nginx, or set NGINX to its path`)

  const directory = mkdtempSync(join(tmpdir(), 'meridian-cluster-'))
  // nginx started as root runs its workers as nobody, who must reach the temporary files.
  chmodSync(directory, 0o755)
  const removeDirectory = () => { rmSync(directory, { recursive: true, force: true }) }
  cleanups.push(removeDirectory)
  lastResort.push(removeDirectory)

  const postgresServerUrl = options.postgresUrl ?? postgresBaseUrl
  const database = await createPostgresDatabase(postgresServerUrl, 'meridian_cluster')
  cleanups.push(database.drop)
  lastResort.push(() => {
    runNodeDetached("const c = new (require('pg').Client)({ connectionString: process.argv[1] }); c.connect().then(() => c.query(`DROP DATABASE IF EXISTS ${process.argv[2]} WITH (FORCE)`)).finally(() => c.end())", [postgresServerUrl, database.name])
  })
  const databaseUrl = database.url

  const { url: redisUrl, redis } = await claimRedisDb(redisBaseUrl, runId)
  cleanups.push(async () => {
    await redis.flushdb()
    await redis.quit()
  })
  lastResort.push(() => {
    runNodeDetached("const r = new (require('ioredis').Redis)(process.argv[1]); r.flushdb().finally(() => r.quit())", [redisUrl])
  })

  const via = (url: string, endpoint: Endpoint | undefined): string =>
    endpoint === undefined ? url : Object.assign(new URL(url), { hostname: endpoint.host, port: String(endpoint.port) }).toString()
  const balancerHost = `${network}.2`
  const jwtSecret = randomBytes(32).toString('base64url')
  const sharedEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    DATABASE_URL: via(databaseUrl, Array.isArray(options.databaseVia) ? undefined : options.databaseVia),
    REDIS_URL: via(redisUrl, options.redisVia),
    JWT_SECRET: jwtSecret,
    TRUST_PROXY: balancerHost,
    // The load of the rollouts and faults comes from the client address, thousands of requests a
    // second: a load test, not a client with a fair share. The other client addresses are limited.
    RATE_LIMIT_EXEMPT: `${network}.10`,
    ...options.env
  }

  const agent = new http.Agent({ keepAlive: true })
  cleanups.push(() => { agent.destroy() })

  const cli = async (args: string[], input = '') =>
    await runMeridian(args, { ...sharedEnv, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl }, input, { children })

  const migrated = await cli(['migrate'])
  if (migrated.code !== 0) throw new Error(`meridian migrate failed: ${migrated.stderr}`)

  const errorLog = join(directory, 'error.log')
  const nginxErrorLog = () => existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''
  for (let index = 0; index < replicaCount; index++) {
    const host = `${network}.${3 + index}`
    const endpoint = { host, port: await freePort(host) }
    const env: Record<string, string> = { ...sharedEnv, HOST: host, PORT: String(endpoint.port) }
    if (Array.isArray(options.databaseVia)) env.DATABASE_URL = via(databaseUrl, options.databaseVia[index])
    replicas.push(new Replica(index, endpoint, env, join(directory, `replica-${index}.log`), options.readyTimeoutMs ?? 30_000))
  }
  cleanups.push(async () => {
    await Promise.all(replicas.map(async (replica) => { if (replica.running) await replica.stop('SIGTERM', 15_000) }))
  })
  const startReplica = async (index: number) => {
    const replica = replicas[index]
    if (replica === undefined) throw new Error(`no replica ${index}`)
    await replica.start()
  }
  cleanups.push(() => {
    if (t.passing()) return
    for (const replica of replicas) t.comment(`replica ${replica.index} (${replica.endpoint.host}:${replica.endpoint.port}), last lines:\n${replica.logTail()}`)
    t.comment(`nginx error log:\n${nginxErrorLog().trimEnd().split('\n').slice(-20).join('\n')}`)
  })
  await Promise.all(replicas.map(async (replica) => { await startReplica(replica.index) }))

  const balancer = { host: balancerHost, port: await freePort(balancerHost) }
  const configFile = join(directory, 'nginx.conf')
  const writeConfig = (text: string) => {
    writeFileSync(configFile, templateNginxConfig(text, balancer, replicas.map((r) => r.endpoint), directory, sharedEnv.RATE_LIMIT_EXEMPT))
  }
  writeConfig(options.nginxConfig ?? readFileSync(deployNginxConfigPath, 'utf8'))
  const nginx = spawn(NGINX, ['-p', directory, '-c', configFile, '-g', `daemon off; pid ${join(directory, 'nginx.pid')};`], { stdio: ['ignore', 'ignore', 'pipe'] })
  children.add(nginx)
  let nginxStderr = ''
  nginx.stderr?.on('data', (chunk: Buffer) => { nginxStderr += chunk.toString() })
  cleanups.push(async () => {
    if (isRunning(nginx)) nginx.kill('SIGQUIT')
    await exitOf(nginx, 5000)
  })
  const listenDeadline = performance.now() + 10_000
  while (!await acceptsConnections(balancer)) {
    if (!isRunning(nginx) || performance.now() > listenDeadline) {
      throw new Error(`nginx did not start: ${nginxStderr}${nginxErrorLog()}`)
    }
    await sleep(20)
  }

  const clientAddress = `${network}.10`
  const request = async (path: string, requestOptions: RequestOptions = {}) =>
    await httpRequest(balancer, path, { from: clientAddress, agent, ...requestOptions })
  const requestReplica = async (index: number, path: string, requestOptions: RequestOptions = {}) => {
    const replica = replicas[index]
    if (replica === undefined) throw new Error(`no replica ${index}`)
    return await httpRequest(replica.endpoint, path, { from: clientAddress, agent, ...requestOptions })
  }

  return {
    balancer,
    clientAddress,
    otherClientAddresses: Array.from({ length: 9 }, (_, i) => `${network}.${11 + i}`),
    replicas,
    databaseUrl,
    redisUrl,
    jwtSecret,
    replicaEnv: sharedEnv,
    directory,
    request,
    requestReplica,
    cli,
    async addUser (username, password, extra = []) {
      const added = await cli(['user', 'add', '--username', username, ...extra], `${password}\n`)
      if (added.code !== 0) throw new Error(`meridian user add ${username} failed: ${added.stderr}`)
    },
    async login (username, password, on) {
      const options = { form: { username, password } }
      const answer = on === undefined ? await request('/api/auth/login', options) : await requestReplica(on, '/api/auth/login', options)
      if (answer.status !== 200) {
        // Which 503 it was (nginx's, under-pressure's with Retry-After, a store's) shows in the logs.
        const logs = replicas.map((replica) => `replica ${replica.index}:\n${replica.logTail(8)}`).join('\n')
        throw new Error(`login as ${username} answered ${answer.status} (retry-after: ${answer.headers['retry-after'] ?? 'none'}, after ${answer.ms.toFixed(0)} ms): ${answer.body}\n${logs}\nnginx:\n${nginxErrorLog().trimEnd().split('\n').slice(-8).join('\n')}`)
      }
      return answer.json()
    },
    async stopReplica (index, signal) {
      const replica = replicas[index]
      if (replica === undefined) throw new Error(`no replica ${index}`)
      return await replica.stop(signal)
    },
    startReplica,
    async reloadBalancer (config) {
      if (config !== undefined) writeConfig(config)
      const master = nginx.pid
      if (master === undefined) throw new Error('nginx is not running')
      const before = new Set(childrenOf(master))
      nginx.kill('SIGHUP')
      // nginx has no "reloaded" signal back, and the shipped error log level (crit) does not say
      // it: wait until the master has started workers it did not have before.
      const deadline = performance.now() + 5000
      while (performance.now() < deadline) {
        if (childrenOf(master).some((pid) => !before.has(pid))) {
          // The old workers close the idle keep-alive connections they leave: a request sent on
          // one would race that close and be reset. The next requests connect to the new workers.
          agent.destroy()
          return
        }
        await sleep(20)
      }
      throw new Error(`nginx did not reload: ${nginxErrorLog()}`)
    },
    nginxErrorLog
  }
}
