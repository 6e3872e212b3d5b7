import { LRUCache } from 'lru-cache'
import type { OpenSession, SessionId, SessionStore } from '../store/session-store.js'

/** Sessions kept for token checks, each kind, the least recently used going first. */
const MAX_CACHED_SESSIONS = 10_000

/**
 * Whether a session still holds, as token checks ask it on every request, without a read of the
 * database in the steady state. An open session is kept while the counters' sessions version
 * holds: every session that ends anywhere (a logout on another replica, the CLI, a password
 * change) moves it, and the request's own read of the counters, which it makes anyway
 * (UserDirectory.latestCounters), sees that. An ended session never opens again, so knowing it
 * ended needs no version at all.
 */
export class OpenSessions {
  /** Emptied whenever the sessions version moves. */
  private readonly cached = new LRUCache<SessionId, OpenSession>({ max: MAX_CACHED_SESSIONS })
  /** Sessions known to have ended (or never to have been ours): refused for good. */
  private readonly ended = new LRUCache<SessionId, true>({ max: MAX_CACHED_SESSIONS })
  /** The sessions version the open sessions above were read under. */
  private version: number | undefined

  /**
   * @param sessionsVersion the sessions version of the latest read of the counters, which each
   *   request makes before it asks here
   */
  constructor (private readonly store: SessionStore, private readonly sessionsVersion: () => number | undefined) {}

  /**
   * Session `id`, if it is `userId`'s and has neither ended nor expired, as of the request's read
   * of the counters.
   */
  async open (id: SessionId, userId: number, now = Date.now()): Promise<OpenSession | undefined> {
    if (this.ended.has(id)) return undefined
    this.currentVersion()
    const session = this.cached.get(id) ?? await this.read(id)
    return session !== undefined && session.userId === userId && session.expiresAt > now ? session : undefined
  }

  /** A session this replica ended: refused here from now on, whatever the counters say. */
  forget (id: SessionId): void {
    this.cached.delete(id)
    this.ended.set(id, true)
  }

  private async read (id: SessionId): Promise<OpenSession | undefined> {
    const version = this.currentVersion()
    const session = await this.store.findOpen(id)
    if (session === undefined) {
      this.ended.set(id, true)
    } else if (version === this.currentVersion()) {
      // Kept only if no read of the counters moved the version while the session was read.
      this.cached.set(id, session)
    }
    return session
  }

  /** The version the counters now say, after dropping the open sessions if it moved. */
  private currentVersion (): number | undefined {
    const version = this.sessionsVersion()
    if (version !== this.version) {
      this.cached.clear()
      this.version = version
    }
    return version
  }
}
