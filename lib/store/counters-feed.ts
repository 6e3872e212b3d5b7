import { setTimeout as sleep } from 'node:timers/promises'
import type { Client, Notification } from 'pg'
import { COUNTERS_CHANNEL } from './migrations.js'

/** The counters every change to the users moves (table user_counters), read once per request. */
export interface UserCounters {
  userCount: number
  /** Moves with every user added or removed: positions in the id order may have changed. */
  membersVersion: number
  /** Moves with every removal and password change: tokens of a user may have stopped holding. */
  credentialsVersion: number
  /** Moves with every session that ends: tokens of a session may have stopped holding. */
  sessionsVersion: number
}

export const HEARTBEAT_MS = 200
/** How long a heartbeat read vouches for the counters; bounds a silently dead feed's lag under the contract's 1 s. */
export const SILENCE_MS = 600
const RECONNECT_MS = 500
const CLOSE_BOUND_MS = 1000
/** Connect/read timeout, above SILENCE_MS: vouching ends then anyway, and reconnecting often slows a slow database. */
export const FEED_WAIT_MS = 3000

export interface CountersFeedTiming {
  heartbeatMs: number
  silenceMs: number
}

export interface CountersFeedEvents {
  /** The connection failed or went silent: requests read the counters themselves until it is back. */
  lost: (error: unknown) => void
  /** Listening (again), and the counters read since: requests take them from the feed. */
  listening: () => void
}

/** Whether `a` is at least as new as `b`: each version only grows, and one row holds all of them. */
export const isAtLeastAsNew = (a: UserCounters, b: UserCounters): boolean =>
  a.membersVersion >= b.membersVersion && a.credentialsVersion >= b.credentialsVersion &&
  a.sessionsVersion >= b.sessionsVersion

function parsePayload (payload: string | undefined): UserCounters | undefined {
  const [userCount, membersVersion, credentialsVersion, sessionsVersion] = (payload ?? '').split(' ').map(Number)
  if (
    sessionsVersion === undefined ||
    [userCount, membersVersion, credentialsVersion, sessionsVersion].some((n) => !Number.isSafeInteger(n))
  ) return undefined
  return {
    userCount: userCount!,
    membersVersion: membersVersion!,
    credentialsVersion: credentialsVersion!,
    sessionsVersion
  }
}

/** PostgreSQL's counters, told: LISTEN, a read every HEARTBEAT_MS; vouched for while one is under SILENCE_MS old. */
export class CountersFeed {
  private latest: UserCounters | undefined
  /** performance.now() until which `latest` holds every change committed up to silenceMs before. */
  private freshUntil = 0
  private client: Client | undefined
  private readonly stopped = new AbortController()
  private running: Promise<void> | undefined
  private up: boolean | undefined

  constructor (
    private readonly connect: () => Client,
    private readonly readCounters: (client: Client) => Promise<UserCounters>,
    private readonly events: Partial<CountersFeedEvents> = {},
    private readonly timing: CountersFeedTiming = { heartbeatMs: HEARTBEAT_MS, silenceMs: SILENCE_MS }
  ) {}

  start (): void {
    this.running ??= this.run()
  }

  /** The counters, if the feed vouches for them now; undefined when the caller must read them. */
  current (): UserCounters | undefined {
    return performance.now() < this.freshUntil ? this.latest : undefined
  }

  get live (): boolean {
    return this.current() !== undefined
  }

  async close (): Promise<void> {
    this.stopped.abort()
    this.freshUntil = 0
    // Bounded: a silent network never answers a graceful end, and pg may drop a half-made connection's callback.
    const ended = Promise.all([this.client?.end().catch(() => {}), this.running])
    await Promise.race([ended, sleep(CLOSE_BOUND_MS, undefined, { ref: false })])
  }

  private adopt (counters: UserCounters): void {
    if (this.latest === undefined || isAtLeastAsNew(counters, this.latest)) this.latest = counters
  }

  private async run (): Promise<void> {
    const { signal } = this.stopped
    while (!signal.aborted) {
      const client = this.connect()
      this.client = client
      // Known lost: vouch for nothing now; the next heartbeat reconnects. An unlistened 'error' crashes the process.
      const lost = (): void => { if (this.client === client) this.freshUntil = 0 }
      client.on('error', lost)
      client.on('end', lost)
      client.on('notification', (notification: Notification) => {
        if (notification.channel !== COUNTERS_CHANNEL) return
        const counters = parsePayload(notification.payload)
        if (counters !== undefined) this.adopt(counters)
      })
      try {
        await client.connect()
        await client.query(`listen ${COUNTERS_CHANNEL}`)
        while (!signal.aborted) {
          const sentAt = performance.now()
          this.adopt(await this.readCounters(client))
          if (signal.aborted) break
          this.freshUntil = sentAt + this.timing.silenceMs
          if (this.up !== true) {
            this.up = true
            this.events.listening?.()
          }
          await sleep(this.timing.heartbeatMs, undefined, { signal })
        }
      } catch (error) {
        if (signal.aborted) break
        this.freshUntil = 0
        if (this.up !== false) {
          this.up = false
          this.events.lost?.(error)
        }
        // Not awaited: ending a connection the network dropped would wait for an answer that never comes.
        client.end().catch(() => {})
        await sleep(RECONNECT_MS, undefined, { signal }).catch(() => {})
      }
    }
  }
}
