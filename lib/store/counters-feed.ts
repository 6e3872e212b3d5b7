import { setTimeout as sleep } from 'node:timers/promises'
import type { Client, Notification } from 'pg'
import { COUNTERS_CHANNEL } from './migrations.js'
import type { UserCounters } from './user-store.js'

/** How often the listening connection reads the counters, which also proves it alive. */
export const HEARTBEAT_MS = 200
/**
 * How long a heartbeat's read vouches for the counters: every change committed before it was sent
 * is in them. Past this with no newer heartbeat, a replica reads per request again. It bounds how
 * late a change can show on a replica whose connection died silently, under the contract's 1 s.
 */
export const SILENCE_MS = 600
/** The wait before connecting again after the connection failed. */
const RECONNECT_MS = 500
/** The longest closing waits for the connection's graceful end. */
const CLOSE_BOUND_MS = 1000
/**
 * The longest the listening connection waits to connect or for a read. Longer than SILENCE_MS on
 * purpose: vouching ends at SILENCE_MS whatever the read does, and a slow database is not made
 * slower by a new connection every second.
 */
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
  a.membersVersion >= b.membersVersion && a.credentialsVersion >= b.credentialsVersion && a.sessionsVersion >= b.sessionsVersion

function parsePayload (payload: string | undefined): UserCounters | undefined {
  const [userCount, membersVersion, credentialsVersion, sessionsVersion] = (payload ?? '').split(' ').map(Number)
  if (sessionsVersion === undefined || [userCount, membersVersion, credentialsVersion, sessionsVersion].some((n) => !Number.isSafeInteger(n))) return undefined
  return { userCount: userCount!, membersVersion: membersVersion!, credentialsVersion: credentialsVersion!, sessionsVersion }
}

/**
 * The counters of a PostgreSQL database as they change, told by the database instead of asked on
 * every request: one connection per replica LISTENs to the notification that each update of the
 * counters row sends from its own transaction (migration 0005), and reads the row every
 * HEARTBEAT_MS. `current()` answers only while a read younger than SILENCE_MS vouches for it:
 * when the connection is down or stalled the caller reads the counters itself, as before, and the
 * feed connects again on its own.
 */
export class CountersFeed {
  private latest: UserCounters | undefined
  /** performance.now() until which `latest` holds every change committed up to silenceMs before. */
  private freshUntil = 0
  private client: Client | undefined
  private readonly stopped = new AbortController()
  private running: Promise<void> | undefined
  /** undefined until the first attempt to listen has ended, one way or the other. */
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

  /** Whether the feed vouches for the counters now. */
  get live (): boolean {
    return this.current() !== undefined
  }

  async close (): Promise<void> {
    this.stopped.abort()
    this.freshUntil = 0
    // Bounded: a graceful end waits for the server's answer, which a silent network never sends,
    // and a connection attempt ended half-way may never settle (pg drops its callback).
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
      // A connection known lost vouches for nothing from that moment; the next heartbeat fails and
      // connects again. (Without a listener, 'error' would crash the process.)
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
