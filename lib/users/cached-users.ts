import { LRUCache } from 'lru-cache'
import { isAtLeastAsNew } from '../store/counters-feed.js'
import type { DirectoryPage, PageAnchors, UserCounters, UserRecord, Database } from '../store/database.js'

/** A deep page seeks from the nearest anchor, so it skips at most this many rows. */
const PAGE_ANCHOR_SPACING = 500
const MAX_CACHED_USERS = 10_000
const MAX_CACHED_PAGES = 200
/** Only activity can change a page's users, and it is written once a second anyway (plugins/app/activity.ts). */
const PAGE_REUSE_MS = 1000

/** Counters pushed by the database as they change (store/counters-feed.ts); `live` while it vouches for them. */
export interface ToldCounters {
  current: () => UserCounters | undefined
  readonly live: boolean
}

/** Each cache valid while its counter holds (docs/decisions.md, "Fast without giving up revocation"). */
export class CachedUsers {
  private counters: UserCounters | undefined
  /** Shared by the calls of this event-loop turn. */
  private nextRead: Promise<UserCounters> | undefined
  /** Emptied whenever the credentials version moves; no TTL, as nothing else makes one stale. */
  private readonly users = new LRUCache<number, UserRecord>({ max: MAX_CACHED_USERS })
  private anchors: { membersVersion: number, read: Promise<PageAnchors> } | undefined
  /** Keyed `offset:limit`; a page's own membersVersion decides whether it may serve. */
  private readonly pages = new LRUCache<string, Promise<DirectoryPage>>({ max: MAX_CACHED_PAGES, ttl: PAGE_REUSE_MS })

  constructor (private readonly store: Database, private readonly told?: ToldCounters) {}

  /** Call first. One event-loop turn's calls share the counters read after them all (setImmediate). */
  async latestCounters (): Promise<UserCounters> {
    this.nextRead ??= new Promise<void>((resolve) => { setImmediate(resolve) }).then(async () => {
      // Calls from now on are in a later turn: they need counters of their own.
      this.nextRead = undefined
      return this.adopt(this.told?.current() ?? await this.store.counters())
    })
    return await this.nextRead
  }

  private adopt (counters: UserCounters): UserCounters {
    // A read and the feed may finish in either order: the counters never go back.
    if (counters === this.counters || (this.counters !== undefined && !isAtLeastAsNew(counters, this.counters))) {
      return this.counters ?? counters
    }
    if (counters.credentialsVersion !== this.counters?.credentialsVersion) this.users.clear()
    this.counters = counters
    return counters
  }

  get countersTold (): boolean | undefined {
    return this.told?.live
  }

  get latest (): UserCounters | undefined {
    return this.counters
  }

  /** Sees any removal or password change committed anywhere before the call. */
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

  /** One snapshot with its count, at least as new as the latest counters (its token check's, if authenticated). */
  async page (offset: number, limit: number): Promise<DirectoryPage> {
    const counters = this.counters
    // Past the end by the counters' own snapshot: no long scan.
    if (counters !== undefined && offset >= counters.userCount) {
      return { userCount: counters.userCount, membersVersion: counters.membersVersion, users: [] }
    }
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
    // The members changed since the anchors were read, or no user sits there: the plain scan is always right.
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
