import { LRUCache } from 'lru-cache'
import type { OpenSession, SessionId, SessionStore } from '../store/session-store.js'

const MAX_CACHED_SESSIONS = 10_000

/** Open sessions cached while the counters' sessions version holds (any ending moves it); ended ones never reopen. */
export class OpenSessions {
  private readonly cached = new LRUCache<SessionId, OpenSession>({ max: MAX_CACHED_SESSIONS })
  /** Ended, or never ours: refused for good. */
  private readonly ended = new LRUCache<SessionId, true>({ max: MAX_CACHED_SESSIONS })
  private version: number | undefined

  /** @param sessionsVersion from the request's read of the counters, made before it asks here */
  constructor (private readonly store: SessionStore, private readonly sessionsVersion: () => number | undefined) {}

  /** The session if still open and `userId`'s, as of the request's read of the counters. */
  async open (id: SessionId, userId: number, now = Date.now()): Promise<OpenSession | undefined> {
    if (this.ended.has(id)) return undefined
    this.currentVersion()
    const session = this.cached.get(id) ?? await this.read(id)
    return session !== undefined && session.userId === userId && session.expiresAt > now ? session : undefined
  }

  /** Ended by this replica: refused here at once, whatever the counters say. */
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

  private currentVersion (): number | undefined {
    const version = this.sessionsVersion()
    if (version !== this.version) {
      this.cached.clear()
      this.version = version
    }
    return version
  }
}
