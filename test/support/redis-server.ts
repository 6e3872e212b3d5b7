import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import { freePort } from './free-port.js'
import { skipIfMissing } from './requirements.js'

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server'

export function redisServerSkip (): string | false {
  return skipIfMissing(!existsSync(REDIS_SERVER) && `redis-server not at ${REDIS_SERVER} (apt-get install redis-server, or set REDIS_SERVER)`)
}

/**
 * A Redis server of the test's own, without persistence, stopped when the test ends. `pause()`
 * stops the process (SIGSTOP) as a fork on a large dataset or a starved host would: connections
 * stay open, commands queue in the kernel and run, in order, on `resume()`.
 */
export class PrivateRedis {
  private constructor (private readonly child: ChildProcess, readonly url: string) {}

  static async start (t: Test): Promise<PrivateRedis> {
    const port = await freePort()
    const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    const redis = new PrivateRedis(child, `redis://127.0.0.1:${port}`)
    t.teardown(async () => { await redis.close() })
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    probe.on('error', () => {})
    for (let i = 0; ; i++) {
      try {
        await probe.connect()
        await probe.ping()
        break
      } catch (error) {
        if (i === 50) throw error
        await sleep(100)
      }
    }
    probe.disconnect()
    return redis
  }

  pause (): void { this.child.kill('SIGSTOP') }
  resume (): void { this.child.kill('SIGCONT') }

  async close (): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    this.child.kill('SIGCONT')
    this.child.kill('SIGTERM')
    await once(this.child, 'exit')
  }
}
