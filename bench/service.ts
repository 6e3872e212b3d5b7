/**
 * `meridian serve` as the benchmark measures it: the built CLI in a process of its own, started as
 * the image starts it, in one of two configurations.
 *
 *   image   the Dockerfile's ENV (NODE_ENV=production, METRICS_PORT) and the default LOG_LEVEL
 *           (info), its standard output a pipe that the harness drains, as a container runtime's
 *   quiet   the same with logging off (LOG_LEVEL=silent) and no metrics port
 *   errors  the same logging errors only (LOG_LEVEL=error), as issue #56 measured releases against each other
 *
 * The load comes from 127.0.0.1, which is exempt from the fair-share limits (RATE_LIMIT_EXEMPT),
 * as an operator's load test would be. With limits `{ behindBalancer }`, 127.0.0.1 is the trusted
 * balancer instead, and each request's X-Forwarded-For names its client: EXEMPT_CLIENT is exempt,
 * any other is limited by quotas a bench never reaches (a day's window), so that one process shows
 * the limiter's cost; with `redisUrl`, the counts are shared through Redis as on replicas.
 */
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { freePort } from '../test/support/free-port.js'
import { fileURLToPath } from 'node:url'
import type { ChildServer } from './harness.js'
import { BENCH_USER, BODY_LIMIT, JWT_SECRET } from './servers.js'

export type Configuration = 'image' | 'quiet' | 'errors'
/** Whether the bench's own address is exempt from the fair-share limits, or a balancer whose clients are limited, but under their quotas. */
export type Limits = 'exempt' | { readonly behindBalancer: true, readonly redisUrl?: string }
/** Behind a balancer: each client's quota of requests a day, which no bench reaches. */
export const BENCH_REQUESTS_PER_DAY = 1e12
/** With limits 'behind a balancer': the one client address exempt from the limits. */
export const EXEMPT_CLIENT = '10.0.0.1'

export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const DOCKERFILE = fileURLToPath(new URL('../Dockerfile', import.meta.url))

/** The runtime stage's `ENV` line of the Dockerfile, as variables. */
function imageEnvironment (): Record<string, string> {
  const stages = readFileSync(DOCKERFILE, 'utf8').split(/^FROM /m)
  const line = stages.at(-1)?.match(/^ENV (.+)$/m)?.[1]
  if (line === undefined) throw new Error('the Dockerfile\'s runtime stage has no ENV line')
  return Object.fromEntries(line.trim().split(/\s+/).map((pair) => pair.split('=', 2) as [string, string]))
}

export { freePort }

/** The environment of `meridian serve` (and of its CLI commands) in `configuration`, on its own ports. */
export async function serviceEnvironment (configuration: Configuration, databaseUrl: string, limits: Limits = 'exempt'): Promise<Record<string, string>> {
  const { METRICS_PORT: _metricsPort, ...image } = imageEnvironment()
  return {
    PATH: process.env.PATH ?? '',
    ...image,
    // On this machine's loopback, with the benchmark's secret, database and body limit.
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATABASE_URL: databaseUrl,
    JWT_SECRET,
    BODY_LIMIT,
    ...(limits === 'exempt'
      ? { RATE_LIMIT_EXEMPT: '127.0.0.1' }
      : {
          TRUST_PROXY: '127.0.0.1',
          RATE_LIMIT_EXEMPT: EXEMPT_CLIENT,
          RATE_LIMIT_REQUESTS: String(BENCH_REQUESTS_PER_DAY),
          RATE_LIMIT_WINDOW: '86400',
          ...(limits.redisUrl === undefined ? {} : { REDIS_URL: limits.redisUrl })
        }),
    ...(configuration === 'image'
      ? { METRICS_HOST: '127.0.0.1', METRICS_PORT: String(await freePort()) }
      : { LOG_LEVEL: configuration === 'quiet' ? 'silent' : 'error' })
  }
}

/** The `bench` user and `users` seeded ones (the same password), added by the CLI (`cli`) as an operator would. */
export function addUsers (env: Record<string, string>, users: number, cli = CLI): void {
  const run = (...args: string[]): void => {
    execFileSync(process.execPath, [cli, ...args], { env: { ...env, LOG_LEVEL: 'silent' }, input: BENCH_USER.password, stdio: ['pipe', 'ignore', 'inherit'] })
  }
  run('user', 'add', '--username', BENCH_USER.username, '--name', 'Bench User')
  if (users > 0) run('user', 'seed', '--count', String(users))
}

/** How a service is launched: the built CLI (by default the working tree's) and arguments for Node (a profiler's). */
export interface Launch { readonly cli?: string, readonly nodeArgs?: readonly string[] }

/** `meridian serve` in `configuration` on `databaseUrl` with the bench user and `users` more, once ready. */
export async function startService (configuration: Configuration, databaseUrl: string, users = 0, limits: Limits = 'exempt', launch: Launch = {}): Promise<ChildServer> {
  const { cli = CLI, nodeArgs = [] } = launch
  const env = await serviceEnvironment(configuration, databaseUrl, limits)
  addUsers(env, users, cli)
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  child.stdout.resume()
  const url = `http://127.0.0.1:${env.PORT}`
  const exited = once(child, 'exit')
  for (let attempt = 0; !(await fetch(`${url}/health/ready`).then((response) => response.ok, () => false)); attempt++) {
    if (child.exitCode !== null || attempt > 300) throw new Error(`meridian serve (${configuration}) did not become ready`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGINT')
    await exited
  }
  return { url, child, stop }
}
