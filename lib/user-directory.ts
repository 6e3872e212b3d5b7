import type { DirectoryEntry, UserRecord, UserStats, UserStore } from './store/user-store.js'

/** Every this many users the id at that position is kept, so a deep page skips at most this many. */
export const PAGE_ANCHOR_SPACING = 500
/** Users kept for token checks; past it the cache starts again (active users refill it). */
const MAX_CACHED_USERS = 10_000
/** Pages kept at most; past it, those too old to reuse are dropped, or all if none is. */
const MAX_CACHED_PAGES = 200
/**
 * How long a page is reused while the members stay the same. Its users cannot change but for
 * their activity, which is written once a second anyway (plugins/directory.ts): another
 * replica's activity shows here at most this much later.
 */
export const PAGE_REUSE_MS = 1000

/**
 * The users as requests need them, with one read of the store's change counters per request or
 * burst of requests (`sync`), instead of a read of the user, a count and a scan. Everything
 * cached here holds only while the counter it depends on has not moved, so a change made
 * anywhere (another replica, the CLI) shows in the next request of every replica: a removed user
 * or a changed password fails the next token check, an added user is in the next count.
 */
export class UserDirectory {
  private stats: UserStats | undefined
  /** The read that the calls of this turn of the event loop wait for. */
  private nextRead: Promise<UserStats> | undefined
  private readonly users = new Map<number, UserRecord>()
  /** The id at each multiple of PAGE_ANCHOR_SPACING in the id order, for one membersVersion. */
  private anchors: { membersVersion: number, ids: Promise<number[]> } | undefined
  private readonly pages = new Map<string, { membersVersion: number, readAt: number, users: Promise<DirectoryEntry[]> }>()

  constructor (private readonly store: UserStore) {}

  /**
   * The counters for a request that has arrived; drops what they say changed. A request calls it
   * before anything else. A call joins only a read that has not started yet: the calls of one turn
   * of the event loop share one read, started in that turn's check phase (setImmediate), so after
   * each of them was made. An answer still reflects every change committed before its request was
   * sent, and a burst of requests pays for one read.
   */
  async sync (): Promise<UserStats> {
    this.nextRead ??= new Promise<void>((resolve) => { setImmediate(resolve) }).then(async () => {
      // Calls from now on are in a later turn: they need a read of their own.
      this.nextRead = undefined
      const stats = await this.store.stats()
      if (stats.credentialsVersion !== this.stats?.credentialsVersion) this.users.clear()
      this.stats = stats
      return stats
    })
    return await this.nextRead
  }

  /** The user as of the last `sync`, or undefined if removed. */
  async user (id: number): Promise<UserRecord | undefined> {
    const cached = this.users.get(id)
    if (cached !== undefined) return cached
    const version = this.stats?.credentialsVersion
    const user = await this.store.findById(id)
    // Kept only if no sync moved the version while the read was under way.
    if (user !== undefined && version === this.stats?.credentialsVersion) {
      if (this.users.size >= MAX_CACHED_USERS) this.users.clear()
      this.users.set(id, user)
    }
    return user
  }

  /** `limit` users in id order after the first `offset`, as of `stats` (from this request's sync). */
  async page (stats: UserStats, offset: number, limit: number): Promise<DirectoryEntry[]> {
    if (offset >= stats.userCount) return []
    const key = `${offset}:${limit}`
    const now = Date.now()
    const cached = this.pages.get(key)
    if (cached?.membersVersion === stats.membersVersion && now - cached.readAt < PAGE_REUSE_MS) return await cached.users
    if (this.pages.size >= MAX_CACHED_PAGES) this.dropPagesReadBefore(now - PAGE_REUSE_MS)
    const users = this.readPage(stats.membersVersion, offset, limit)
    this.pages.set(key, { membersVersion: stats.membersVersion, readAt: now, users })
    users.catch(() => { if (this.pages.get(key)?.users === users) this.pages.delete(key) })
    return await users
  }

  private dropPagesReadBefore (time: number): void {
    for (const [key, page] of this.pages) if (page.readAt < time) this.pages.delete(key)
    if (this.pages.size >= MAX_CACHED_PAGES) this.pages.clear()
  }

  private async readPage (membersVersion: number, offset: number, limit: number): Promise<DirectoryEntry[]> {
    if (offset < PAGE_ANCHOR_SPACING) return await this.store.list(offset, limit)
    const ids = await this.anchorsFor(membersVersion)
    const anchor = Math.floor(offset / PAGE_ANCHOR_SPACING)
    const firstId = ids[anchor]
    // The users changed again since `stats`: the plain scan is right whatever happened.
    if (firstId === undefined) return await this.store.list(offset, limit)
    return await this.store.listFrom(firstId, offset - anchor * PAGE_ANCHOR_SPACING, limit)
  }

  private async anchorsFor (membersVersion: number): Promise<number[]> {
    if (this.anchors?.membersVersion !== membersVersion) {
      const ids = this.store.idsEvery(PAGE_ANCHOR_SPACING)
      this.anchors = { membersVersion, ids }
      ids.catch(() => { if (this.anchors?.ids === ids) this.anchors = undefined })
    }
    return await this.anchors.ids
  }
}
