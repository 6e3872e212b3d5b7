import { LRUCache } from 'lru-cache'
import { isAtLeastAsNew } from '../store/counters-feed.js'
import type { DirectoryPage, PageAnchors, UserCounters, UserRecord, UserStore } from '../store/user-store.js'

/** Every this many users the id at that position is kept, so a deep page skips at most this many. */
const PAGE_ANCHOR_SPACING = 500
/** Users kept for token checks, the least recently used going first. */
const MAX_CACHED_USERS = 10_000
/** Pages kept, the least recently used going first. */
const MAX_CACHED_PAGES = 200
/**
 * How long a page is reused while the members stay the same. Its users cannot change but for
 * their activity, which is written once a second anyway (plugins/activity.ts): another
 * replica's activity shows here at most this much later.
 */
const PAGE_REUSE_MS = 1000

/** Counters that the database tells as they change (store/counters-feed.ts), when it vouches for them. */
export interface ToldCounters {
  current: () => UserCounters | undefined
  readonly live: boolean
}

/**
 * The users as requests need them, with the store's change counters instead of a read of the
 * user, a count and a scan. Everything cached here holds only while the counter it depends on has
 * not moved. Each request takes the counters first (`latestCounters`): as told by the database,
 * while it tells them (PostgreSQL), so that a change made anywhere (another replica, the CLI) shows
 * on every replica within milliseconds, and within store/counters-feed.ts's SILENCE_MS at worst;
 * otherwise read once per request or burst of requests, so that it shows in the next request.
 */
export class UserDirectory {
  private counters: UserCounters | undefined
  /** The read that the calls of this turn of the event loop wait for. */
  private nextRead: Promise<UserCounters> | undefined
  /** Emptied whenever the credentials version moves; no TTL, as nothing else makes one stale. */
  private readonly users = new LRUCache<number, UserRecord>({ max: MAX_CACHED_USERS })
  /** The id at each multiple of PAGE_ANCHOR_SPACING in the id order, asked for one membersVersion. */
  private anchors: { membersVersion: number, read: Promise<PageAnchors> } | undefined
  /** Pages by `offset:limit`; a page's own snapshot says whether it may serve a request. */
  private readonly pages = new LRUCache<string, Promise<DirectoryPage>>({ max: MAX_CACHED_PAGES, ttl: PAGE_REUSE_MS })

  constructor (private readonly store: UserStore, private readonly told?: ToldCounters) {}

  /**
   * The counters for a request that has arrived; drops what they say changed. A request calls it
   * before anything else. A call joins only a read that has not started yet: the calls of one turn
   * of the event loop share one read, started in that turn's check phase (setImmediate), so after
   * each of them was made. An answer still reflects every change committed before its request was
   * sent, and a burst of requests pays for one read.
   */
  async latestCounters (): Promise<UserCounters> {
    const told = this.told?.current()
    if (told !== undefined) return this.adopt(told)
    this.nextRead ??= new Promise<void>((resolve) => { setImmediate(resolve) }).then(async () => {
      // Calls from now on are in a later turn: they need a read of their own.
      this.nextRead = undefined
      return this.adopt(await this.store.counters())
    })
    return await this.nextRead
  }

  private adopt (counters: UserCounters): UserCounters {
    // A read and the feed may finish in either order: the counters never go back.
    if (counters === this.counters || (this.counters !== undefined && !isAtLeastAsNew(counters, this.counters))) return this.counters ?? counters
    if (counters.credentialsVersion !== this.counters?.credentialsVersion) this.users.clear()
    this.counters = counters
    return counters
  }

  /** Whether the counters are told by the database now (true) or read per request (false); undefined where they are always read. */
  get countersTold (): boolean | undefined {
    return this.told?.live
  }

  /** The counters of the latest read, which every request makes first (latestCounters); undefined before the first. */
  get latest (): UserCounters | undefined {
    return this.counters
  }

  /**
   * The user as of now, or undefined if removed: a removal or password change committed anywhere
   * before the call shows.
   */
  async user (id: number): Promise<UserRecord | undefined> {
    await this.latestCounters()
    const cached = this.users.get(id)
    if (cached !== undefined) return cached
    const version = this.counters?.credentialsVersion
    const user = await this.store.findById(id)
    // Kept only if no read of the counters moved the version while the user was read.
    if (user !== undefined && version === this.counters?.credentialsVersion) this.users.set(id, user)
    return user
  }

  /**
   * `limit` users in id order after the first `offset`, with the count they were read with: one
   * snapshot, at least as new as the last read of the counters (for an authenticated request,
   * its own token check's).
   */
  async page (offset: number, limit: number): Promise<DirectoryPage> {
    const counters = this.counters
    // Past the end, as those counters (one snapshot) say: no scan that long.
    if (counters !== undefined && offset >= counters.userCount) return { userCount: counters.userCount, membersVersion: counters.membersVersion, users: [] }
    const key = `${offset}:${limit}`
    const cached = this.pages.get(key)
    if (cached !== undefined) {
      const page = await cached.catch(() => undefined)
      // Versions only ever grow: a page read at the latest version or later shows every change made before.
      if (page !== undefined && page.membersVersion >= (this.counters?.membersVersion ?? Infinity)) return page
    }
    const page = this.readPage(offset, limit)
    this.pages.set(key, page)
    page.catch(() => { if (this.pages.get(key) === page) this.pages.delete(key) })
    return await page
  }

  private async readPage (offset: number, limit: number): Promise<DirectoryPage> {
    const membersVersion = this.counters?.membersVersion
    if (offset < PAGE_ANCHOR_SPACING || membersVersion === undefined) return await this.store.pageFrom(0, offset, limit)
    const anchors = await this.anchorsFor(membersVersion)
    const anchor = Math.floor(offset / PAGE_ANCHOR_SPACING)
    const firstId = anchors.membersVersion === membersVersion ? anchors.ids[anchor] : undefined
    if (firstId !== undefined) {
      const page = await this.store.pageFrom(firstId, offset - anchor * PAGE_ANCHOR_SPACING, limit)
      if (page.membersVersion === membersVersion) return page
    }
    // The members changed since the anchors were read, or there is no user at that position:
    // the plain scan is right whatever happened.
    return await this.store.pageFrom(0, offset, limit)
  }

  private async anchorsFor (membersVersion: number): Promise<PageAnchors> {
    if (this.anchors?.membersVersion !== membersVersion) {
      const read = this.store.idsEvery(PAGE_ANCHOR_SPACING)
      this.anchors = { membersVersion, read }
      read.catch(() => { if (this.anchors?.read === read) this.anchors = undefined })
    }
    return await this.anchors.read
  }
}
