import { BlockList, isIPv4 } from 'node:net'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  onSendHookHandler,
  preHandlerHookHandler
} from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { errorBody } from '../../lib/http/errors.js'
import {
  MAX_EVENT_LOOP_RENDER_LENGTH,
  possibleTableCells,
  rendersQuickly
} from '../../lib/markdown/event-loop-bounds.js'
import type { Redis } from 'ioredis'
import { reportOutages } from '../../lib/store/redis-connection.js'
import { clientKeyOf, QuotaCounter, type QuotaPolicy, type Standing } from '../../lib/fair-share/quotas.js'
import { RenderPlaces, type RenderPlace } from '../../lib/fair-share/render-places.js'
import { SharedCounts } from '../../lib/fair-share/shared-counts.js'
import { StoreOutageLog } from '../../lib/store/outage-log.js'

/** `request`: one unit of the request quota; `document` (Markdown): that, the document's size, and a render place. */
export type FairShareCharge = 'request' | 'document'

declare module 'fastify' {
  interface FastifyContextConfig {
    fairShare?: FairShareCharge
  }
  interface FastifyInstance {
    fairShare: FairShare
  }
  interface FastifyRequest {
    /** A limited Markdown request's client and charge; null for an exempt client, whose later hooks do nothing. */
    fairShareDocument: LimitedDocument | null
  }
}

export interface FairShare {
  refusals: () => Iterable<{ route: string, policy: string, count: number }>
}

export interface FairShareOptions {
  windowSeconds: number
  requestsPerWindow: number
  markdownBytesPerWindow: number
  markdownRendersAtOnce: number
  exempt: readonly string[]
  /** Charged for a chunked document (no Content-Length): the most a body may be. */
  bodyLimit: number
  syncIntervalMs?: number
}

/** A Markdown request charged in onRequest; a render place then if its declared size needs one, else perhaps later. */
interface LimitedDocument { readonly client: string, readonly bytes: number, place: RenderPlace | null }

export const POLICY_NAMES = {
  requests: 'requests',
  markdownBytes: 'markdown-bytes',
  markdownRenders: 'markdown-renders'
} as const

/** Per policy and replica, least recently seen forgotten first. */
const MAX_CLIENTS = 100_000
const DEFAULT_SYNC_INTERVAL_MS = 100
/** Without a sync answered for this long, the shared totals stop counting and this replica's own decide. */
const SHARED_TOTALS_STALE_MS = 1000
export const REDIS_KEY_PREFIX = 'meridian:fair-share:'
/** A cell costs what ordinary Markdown of the same render time would (docs/decisions.md, "Fair share"). */
const BYTES_PER_TABLE_CELL = 4
/** A JSON string spends at most 6 bytes a character (`\u0000`); fewer bytes prove nothing (CJK takes 3). */
const CERTAINLY_THREADED_BYTES = MAX_EVENT_LOOP_RENDER_LENGTH * 6 + 64
/** Retry-After when over the renders at once: a render takes up to seconds. */
const RENDERS_RETRY_AFTER_SECONDS = 1

/** Capped at `bodyLimit`; a chunked body or a bad Content-Length counts as `bodyLimit`. */
function declaredBytes (request: FastifyRequest, bodyLimit: number): number {
  const length = request.headers['content-length']
  if (length === undefined) return request.headers['transfer-encoding'] === undefined ? 0 : bodyLimit
  const declared = Number(length)
  return Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, bodyLimit) : bodyLimit
}

function policyItem (policy: QuotaPolicy): string {
  const unit = policy.unit === 'requests' ? '' : `;qu="${policy.unit}"`
  return `"${policy.name}";q=${policy.quota}${unit};w=${policy.windowSeconds}`
}

const MAX_REMEMBERED_ADDRESSES = 10_000

/** Undefined for an exempt client; `request.ip` already follows TRUST_PROXY. */
function clientResolver (exempt: readonly string[]): (request: FastifyRequest) => string | undefined {
  if (exempt.length === 0) return (request) => clientKeyOf(request.ip)
  const exemptions = new BlockList()
  for (const entry of exempt) {
    const [address = '', prefix] = entry.split('/')
    const family = isIPv4(address) ? 'ipv4' : 'ipv6'
    if (prefix === undefined) exemptions.addAddress(address, family)
    else exemptions.addSubnet(address, Number(prefix), family)
  }
  // BlockList.check parses the address on every call (docs/performance.md, "The fair share"). A Map, not an LRU: a
  // lookup a request is the whole of an exempt client's cost, and a full Map starts again, which costs only re-checks.
  const exempted = new Map<string, boolean>()
  return (request) => {
    const address = request.ip
    let exempt = exempted.get(address)
    if (exempt === undefined) {
      if (exempted.size >= MAX_REMEMBERED_ADDRESSES) exempted.clear()
      exempt = exemptions.check(address, isIPv4(address) ? 'ipv4' : 'ipv6')
      exempted.set(address, exempt)
    }
    return exempt ? undefined : clientKeyOf(address)
  }
}

/** Refusals since start by route and policy, for the metrics; at most one warn line per client per interval. */
class Refusals {
  readonly #counts = new Map<string, { route: string, policy: string, count: number }>()
  readonly #lastLines = new LRUCache<string, { at: number, refusedSince: number }>({ max: 10_000 })

  constructor (private readonly log: FastifyBaseLogger, private readonly intervalMs: number) {}

  record (client: string, route: string, policy: string, retryAfterSeconds: number): void {
    const key = `${route} ${policy}`
    const counted = this.#counts.get(key)
    if (counted === undefined) this.#counts.set(key, { route, policy, count: 1 })
    else counted.count++
    const now = Date.now()
    const last = this.#lastLines.get(client)
    if (last !== undefined && now - last.at < this.intervalMs) {
      last.refusedSince++
      return
    }
    this.log.warn(
      { client, route, policy, retryAfterSeconds, refusedSinceLastLine: (last?.refusedSince ?? 0) + 1 },
      'client refused: over its fair share'
    )
    this.#lastLines.set(client, { at: now, refusedSince: 0 })
  }

  counts (): Iterable<{ route: string, policy: string, count: number }> {
    return this.#counts.values()
  }
}

interface Limits {
  readonly options: FairShareOptions
  readonly requests: QuotaCounter
  readonly markdownBytes: QuotaCounter
  readonly places: RenderPlaces
  readonly clientOf: (request: FastifyRequest) => string | undefined
  readonly refusals: Refusals
  readonly policyHeader: Readonly<Record<FairShareCharge, string>>
}

/** `shared`: with Redis, a client's share is one across replicas. */
function limitsFor (options: FairShareOptions, log: FastifyBaseLogger, shared: boolean): Limits {
  const counterOptions = { maxClients: MAX_CLIENTS, staleMs: SHARED_TOTALS_STALE_MS, shared }
  const requests = new QuotaCounter({
    name: POLICY_NAMES.requests,
    quota: options.requestsPerWindow,
    windowSeconds: options.windowSeconds,
    unit: 'requests'
  }, counterOptions)
  const markdownBytes = new QuotaCounter({
    name: POLICY_NAMES.markdownBytes,
    quota: options.markdownBytesPerWindow,
    windowSeconds: options.windowSeconds,
    unit: 'content-bytes'
  }, counterOptions)
  const rendersPolicyItem =
    `"${POLICY_NAMES.markdownRenders}";q=${options.markdownRendersAtOnce};qu="concurrent-requests"`
  return {
    options,
    requests,
    markdownBytes,
    places: new RenderPlaces(),
    clientOf: clientResolver(options.exempt),
    refusals: new Refusals(log, options.windowSeconds * 1000),
    policyHeader: {
      request: policyItem(requests.policy),
      document: [policyItem(requests.policy), policyItem(markdownBytes.policy), rendersPolicyItem].join(', ')
    }
  }
}

/** With Redis, the counters' totals are synced in batches (lib/fair-share/shared-counts.ts), never waited for. */
function shareThroughRedis (
  fastify: FastifyInstance,
  redis: Redis,
  counters: QuotaCounter[],
  intervalMs: number
): void {
  const outageLog = new StoreOutageLog(fastify.log, 10_000, Date.now, 'fair-share store')
  reportOutages(redis, outageLog)
  const sharedCounts = new SharedCounts(redis, counters, {
    intervalMs,
    prefix: REDIS_KEY_PREFIX,
    onFailure: (error) => { outageLog.failed(error) },
    onAnswer: () => { outageLog.answered() }
  })
  fastify.addHook('onClose', async () => { await sharedCounts.close() })
}

const rateLimitItem = (name: string, standing: Standing): string =>
  `"${name}";r=${standing.remaining};t=${standing.resetSeconds}`

/** 429 with the headers, sent from a hook: a refusal is the client's doing, not worth the error path's log line. */
function refuse (
  limits: Limits,
  request: FastifyRequest,
  reply: FastifyReply,
  client: string,
  policy: string,
  retryAfterSeconds: number,
  rateLimit: string
): void {
  limits.refusals.record(client, request.routeOptions.url ?? request.url, policy, retryAfterSeconds)
  reply.code(429).headers({ 'retry-after': String(retryAfterSeconds), ratelimit: rateLimit })
  // Closing leaves the body unread: to keep the connection Node would read it all, so a flood costs even refused.
  // Behind a trusted balancer the body is already read, and the connection is kept.
  if (
    request.body === undefined && declaredBytes(request, limits.options.bodyLimit) > 0 &&
    request.ip === request.socket.remoteAddress
  ) reply.header('connection', 'close')
  void reply.send(errorBody(429, 'Too many requests'))
}

/** `onRequest` of a route charged by request: one unit of the request quota. */
function requestLimit (limits: Limits): onRequestHookHandler {
  const { requests, policyHeader } = limits
  const headersBelowRemaining = limits.options.requestsPerWindow / 2
  return function limitRequest (request, reply, done) {
    const client = limits.clientOf(request)
    if (client === undefined) return done()
    const standing = requests.standing(client, 1)
    if (standing.retryAfterSeconds > 0) {
      reply.header('ratelimit-policy', policyHeader.request)
      return refuse(
        limits, request, reply, client,
        POLICY_NAMES.requests, standing.retryAfterSeconds, rateLimitItem(POLICY_NAMES.requests, standing)
      )
    }
    requests.charge(client, 1)
    // Only once half the quota is used, as the draft allows: the headers cost a cheap route (docs/performance.md).
    if (standing.remaining < headersBelowRemaining) {
      reply.header('ratelimit-policy', policyHeader.request)
        .header('ratelimit', rateLimitItem(POLICY_NAMES.requests, standing))
    }
    done()
  }
}

/** `onRequest` of the Markdown route, before its body is read: a request, the declared bytes, maybe a render place. */
function documentLimit (limits: Limits): onRequestHookHandler {
  const { options, requests, markdownBytes, places } = limits
  const rateLimit = (requestsLeft: Standing, bytesLeft: Standing, rendersLeft: number): string => [
    rateLimitItem(POLICY_NAMES.requests, requestsLeft),
    rateLimitItem(POLICY_NAMES.markdownBytes, bytesLeft),
    `"${POLICY_NAMES.markdownRenders}";r=${rendersLeft}`
  ].join(', ')
  return function limitDocument (request, reply, done) {
    const client = limits.clientOf(request)
    if (client === undefined) return done()
    const bytes = declaredBytes(request, options.bodyLimit)
    // Only a body that must hold more characters than the event loop renders takes a place before it is read; any
    // other that needs a thread (longer than that, or a table of many cells) is found by tableLimit once read.
    const takesRenderPlace = bytes > CERTAINLY_THREADED_BYTES
    const renders = places.taken(client)
    const requestStanding = requests.standing(client, 1)
    const bytesStanding = markdownBytes.standing(client, bytes)
    const rendersStanding: Standing = takesRenderPlace && renders >= options.markdownRendersAtOnce
      ? { remaining: 0, resetSeconds: 0, retryAfterSeconds: RENDERS_RETRY_AFTER_SECONDS }
      : {
          remaining: Math.max(0, options.markdownRendersAtOnce - renders - (takesRenderPlace ? 1 : 0)),
          resetSeconds: 0,
          retryAfterSeconds: 0
        }
    reply.header('ratelimit-policy', limits.policyHeader.document)
    const over = ([
      [POLICY_NAMES.requests, requestStanding],
      [POLICY_NAMES.markdownBytes, bytesStanding],
      [POLICY_NAMES.markdownRenders, rendersStanding]
    ] as const)
      .filter(([, standing]) => standing.retryAfterSeconds > 0)
    if (over.length > 0) {
      // The longest wait is the one that lets the request through.
      const [policy, standing] = over.reduce((longest, next) =>
        next[1].retryAfterSeconds > longest[1].retryAfterSeconds ? next : longest)
      // Refused, the request is charged nothing: what is left is what was left before it.
      const uncharged = (counter: QuotaCounter, standing: Standing): Standing =>
        standing.retryAfterSeconds > 0 ? standing : counter.standing(client, 0)
      const rendersLeft = Math.max(0, options.markdownRendersAtOnce - renders)
      return refuse(
        limits, request, reply, client, policy, standing.retryAfterSeconds,
        rateLimit(uncharged(requests, requestStanding), uncharged(markdownBytes, bytesStanding), rendersLeft)
      )
    }
    requests.charge(client, 1)
    markdownBytes.charge(client, bytes)
    const document: LimitedDocument = { client, bytes, place: null }
    request.fairShareDocument = document
    if (takesRenderPlace) document.place = places.take(client, reply.raw, false)
    reply.header('ratelimit', rateLimit(requestStanding, bytesStanding, rendersStanding.remaining))
    done()
  }
}

/** `preHandler` of the Markdown route: a small padded table may need a thread, and takes a place charged by cells. */
function tableLimit (limits: Limits): preHandlerHookHandler {
  const { options, markdownBytes, places } = limits
  return function limitTableDocument (request, reply, done) {
    const document = request.fairShareDocument
    if (document === null) return done()
    if (document.place !== null) places.holdWhileHandling(document.place)
    const markdown = (request.body as { markdown?: unknown } | undefined)?.markdown
    if (document.place !== null || typeof markdown !== 'string' || rendersQuickly(markdown)) return done()
    const { client, bytes } = document
    if (places.taken(client) >= options.markdownRendersAtOnce) {
      return refuse(
        limits, request, reply, client,
        POLICY_NAMES.markdownRenders, RENDERS_RETRY_AFTER_SECONDS, `"${POLICY_NAMES.markdownRenders}";r=0`
      )
    }
    const cost = Math.max(0, Math.min(possibleTableCells(markdown) * BYTES_PER_TABLE_CELL, options.bodyLimit) - bytes)
    const standing = markdownBytes.standing(client, cost)
    if (standing.retryAfterSeconds > 0) {
      return refuse(
        limits, request, reply, client,
        POLICY_NAMES.markdownBytes, standing.retryAfterSeconds, rateLimitItem(POLICY_NAMES.markdownBytes, standing)
      )
    }
    markdownBytes.charge(client, cost)
    document.place = places.take(client, reply.raw, true)
    done()
  }
}

/** `onSend` of the Markdown route: the answer is out, the render place free. */
function placeRelease (limits: Limits): onSendHookHandler {
  return function releaseAfterRender (request, _reply, payload, done) {
    const place = request.fairShareDocument?.place
    if (place != null) limits.places.release(place)
    done(null, payload)
  }
}

/** Each client's fair share (docs/decisions.md, "Fair share"): the hooks above on each route by `config.fairShare`. */
export default fp(async function fairShare (fastify: FastifyInstance, options: FairShareOptions) {
  const { redis } = fastify
  const limits = limitsFor(options, fastify.log, redis !== undefined)
  if (redis !== undefined) {
    shareThroughRedis(
      fastify,
      redis,
      [limits.requests, limits.markdownBytes],
      options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS
    )
  }
  const hookFor: Record<FairShareCharge, onRequestHookHandler> = {
    request: requestLimit(limits),
    document: documentLimit(limits)
  }
  const limitTable = tableLimit(limits)
  const releasePlace = placeRelease(limits)

  fastify.decorateRequest('fairShareDocument', null)
  fastify.addHook('onRoute', (route) => {
    const charge = route.config?.fairShare
    if (charge === undefined) {
      if (route.url.startsWith('/api/')) {
        throw new Error(`${route.url} is an API route without config.fairShare: every API route is limited per client`)
      }
      return
    }
    route.onRequest = [...[route.onRequest ?? []].flat(), hookFor[charge]]
    if (charge === 'document') {
      route.preHandler = [limitTable, ...[route.preHandler ?? []].flat()]
      route.onSend = [...[route.onSend ?? []].flat(), releasePlace]
    }
  })

  fastify.decorate('fairShare', { refusals: () => limits.refusals.counts() } satisfies FairShare)
}, { name: 'fair-share', dependencies: ['errors', 'redis'] })
