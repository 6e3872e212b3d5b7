import { BlockList, isIPv4 } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { errorBody } from './errors.js'
import { MAX_EVENT_LOOP_RENDER_LENGTH, possibleTableCells, rendersQuickly } from './markdown-renderer.js'
import { connectRedis } from './redis-connection.js'
import { clientKeyOf, QuotaCounter, type QuotaPolicy, type Standing } from '../lib/fair-share/quotas.js'
import { SharedCounts } from '../lib/fair-share/shared-counts.js'
import { StoreOutageLog } from '../lib/store/outage-log.js'

/** `request`: one unit of the request quota; `document` (Markdown): that, the document's size, and a render place. */
export type FairShareCharge = 'request' | 'document'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every API route. */
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
  /** Refusals since start, by route and policy, for the metrics. */
  refusals: () => Iterable<{ route: string, policy: string, count: number }>
}

export interface FairShareOptions {
  windowSeconds: number
  requestsPerWindow: number
  markdownBytesPerWindow: number
  markdownRendersAtOnce: number
  /** Addresses and CIDR ranges never limited. */
  exempt: readonly string[]
  /** Charged for a chunked document (no Content-Length): the most a body may be. */
  bodyLimit: number
  /** With Redis, a client's share is one across replicas. */
  redisUrl?: string
  syncIntervalMs?: number
}

interface RenderPlace { readonly client: string, held: boolean, handling: boolean }

/** A Markdown request charged in onRequest; a render place if its declared size needs one, else perhaps in preHandler. */
interface LimitedDocument { readonly client: string, readonly bytes: number, place: RenderPlace | null }

export const POLICY_NAMES = { requests: 'requests', markdownBytes: 'markdown-bytes', markdownRenders: 'markdown-renders' } as const

/** Per policy and replica, least recently seen forgotten first (about 200 bytes each). */
const MAX_CLIENTS = 100_000
const DEFAULT_SYNC_INTERVAL_MS = 100
/** Without a sync answered for this long, the shared totals stop counting and this replica's own decide. */
const SHARED_TOTALS_STALE_MS = 1000
export const REDIS_KEY_PREFIX = 'meridian:fair-share:'
/** A cell costs what ordinary Markdown of the same render time would (docs/decisions.md, "Fair share"). */
const BYTES_PER_TABLE_CELL = 4
/**
 * A JSON string spends at most 6 bytes on a character (`\u0000`), and the body's braces and key a few more: a body
 * past this holds more than MAX_EVENT_LOOP_RENDER_LENGTH characters (whitespace around them aside). Bytes are not
 * characters: 3,010 CJK characters are 9,045 bytes and render on the event loop.
 */
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

/** The IETF draft's RateLimit-Policy item of a windowed policy. */
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

/** At most one line per client per interval, with the refusals since: a flood writes a handful of lines. */
function refusalWarnings (log: FastifyBaseLogger, intervalMs: number): (client: string, route: string, policy: string, retryAfterSeconds: number) => void {
  const lastLines = new LRUCache<string, { at: number, refusedSince: number }>({ max: 10_000 })
  return (client, route, policy, retryAfterSeconds) => {
    const now = Date.now()
    const last = lastLines.get(client)
    if (last !== undefined && now - last.at < intervalMs) {
      last.refusedSince++
      return
    }
    log.warn({ client, route, policy, retryAfterSeconds, refusedSinceLastLine: (last?.refusedSince ?? 0) + 1 }, 'client refused: over its fair share')
    lastLines.set(client, { at: now, refusedSince: 0 })
  }
}

/**
 * Each client's fair share of the API (docs/decisions.md, "Fair share"), decided in `onRequest`, before the body
 * is read. With Redis the counts are synced in batches (lib/fair-share/shared-counts.ts), never waited for.
 */
export default fp(async function fairShare (fastify: FastifyInstance, options: FairShareOptions) {
  const shared = options.redisUrl !== undefined
  const counterOptions = { maxClients: MAX_CLIENTS, staleMs: SHARED_TOTALS_STALE_MS, shared }
  const requests = new QuotaCounter({ name: POLICY_NAMES.requests, quota: options.requestsPerWindow, windowSeconds: options.windowSeconds, unit: 'requests' }, counterOptions)
  const markdownBytes = new QuotaCounter({ name: POLICY_NAMES.markdownBytes, quota: options.markdownBytesPerWindow, windowSeconds: options.windowSeconds, unit: 'content-bytes' }, counterOptions)
  const headersBelowRemaining = options.requestsPerWindow / 2
  const rendering = new Map<string, number>()
  const rendersPolicyItem = `"${POLICY_NAMES.markdownRenders}";q=${options.markdownRendersAtOnce};qu="concurrent-requests"`
  const policyHeader: Record<FairShareCharge, string> = {
    request: policyItem(requests.policy),
    document: [policyItem(requests.policy), policyItem(markdownBytes.policy), rendersPolicyItem].join(', ')
  }

  if (options.redisUrl !== undefined) {
    const outageLog = new StoreOutageLog(fastify.log, 10_000, Date.now, 'fair-share store')
    const redis = connectRedis(options.redisUrl, outageLog)
    const sharedCounts = new SharedCounts(redis, [requests, markdownBytes], {
      intervalMs: options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS,
      prefix: REDIS_KEY_PREFIX,
      onFailure: (error) => { outageLog.failed(error) },
      onAnswer: () => { outageLog.answered() }
    })
    fastify.addHook('onClose', async () => {
      await sharedCounts.close()
      await redis.quit().catch(() => { redis.disconnect() })
    })
  }

  const clientOf = clientResolver(options.exempt)
  const warn = refusalWarnings(fastify.log, options.windowSeconds * 1000)
  const refusals = new Map<string, { route: string, policy: string, count: number }>()

  function refuse (request: FastifyRequest, reply: FastifyReply, client: string, policy: string, retryAfterSeconds: number, rateLimit: string): void {
    const route = request.routeOptions.url ?? request.url
    const key = `${route} ${policy}`
    const counted = refusals.get(key)
    if (counted === undefined) refusals.set(key, { route, policy, count: 1 })
    else counted.count++
    warn(client, route, policy, retryAfterSeconds)
    reply.code(429).headers({ 'retry-after': String(retryAfterSeconds), ratelimit: rateLimit })
    // Closing leaves the body unread: to keep the connection Node would read it all, so a flood costs even refused.
    // Behind a trusted balancer the body is already read, and the connection is kept.
    if (request.body === undefined && declaredBytes(request, options.bodyLimit) > 0 && request.ip === request.socket.remoteAddress) reply.header('connection', 'close')
    // Sent, not thrown: a refusal is the client's doing, not worth the error path's log line.
    void reply.send(errorBody(429, 'Too many requests'))
  }

  const rateLimitItem = (name: string, standing: Standing) => `"${name}";r=${standing.remaining};t=${standing.resetSeconds}`

  function limitRequest (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const client = clientOf(request)
    if (client === undefined) return done()
    const standing = requests.standing(client, 1)
    if (standing.retryAfterSeconds > 0) {
      reply.header('ratelimit-policy', policyHeader.request)
      return refuse(request, reply, client, POLICY_NAMES.requests, standing.retryAfterSeconds, rateLimitItem(POLICY_NAMES.requests, standing))
    }
    requests.charge(client, 1)
    // Only once half the quota is used, as the draft allows: the headers cost a cheap route (docs/performance.md).
    if (standing.remaining < headersBelowRemaining) {
      reply.header('ratelimit-policy', policyHeader.request).header('ratelimit', rateLimitItem(POLICY_NAMES.requests, standing))
    }
    done()
  }

  /**
   * A render place is held while its render may run: until the answer is sent, or until the client
   * hangs up before the handler starts. A client that hangs up while its document renders does not
   * stop the render, so it does not free the place either.
   */
  function takeRenderPlace (document: LimitedDocument, reply: FastifyReply, handling: boolean): void {
    const { client } = document
    rendering.set(client, (rendering.get(client) ?? 0) + 1)
    const place: RenderPlace = { client, held: true, handling }
    document.place = place
    reply.raw.once('close', () => { if (!place.handling) releaseRenderPlace(place) })
  }

  function releaseRenderPlace (place: RenderPlace): void {
    if (!place.held) return
    place.held = false
    const left = (rendering.get(place.client) ?? 1) - 1
    if (left > 0) rendering.set(place.client, left)
    else rendering.delete(place.client)
  }

  /** The body is read and the handler is next: the place is now released only once the answer is sent. */
  function holdRenderPlaceWhileHandling (place: RenderPlace | null): void {
    if (place === null) return
    place.handling = true
    if (!place.held) { // the client hung up just as its body was read: the render still runs
      place.held = true
      rendering.set(place.client, (rendering.get(place.client) ?? 0) + 1)
    }
  }

  function limitDocument (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const client = clientOf(request)
    if (client === undefined) return done()
    const bytes = declaredBytes(request, options.bodyLimit)
    // Only a body that must hold more characters than the event loop renders takes a place before it is read; any other
    // that needs a thread (longer than that, or a table of many cells) is found by limitTableDocument once read.
    const takesRenderPlace = bytes > CERTAINLY_THREADED_BYTES
    const renders = rendering.get(client) ?? 0
    const requestStanding = requests.standing(client, 1)
    const bytesStanding = markdownBytes.standing(client, bytes)
    const rendersStanding: Standing = takesRenderPlace && renders >= options.markdownRendersAtOnce
      ? { remaining: 0, resetSeconds: 0, retryAfterSeconds: RENDERS_RETRY_AFTER_SECONDS }
      : { remaining: Math.max(0, options.markdownRendersAtOnce - renders - (takesRenderPlace ? 1 : 0)), resetSeconds: 0, retryAfterSeconds: 0 }
    const rateLimit = (requestsLeft: Standing, bytesLeft: Standing, rendersLeft: number) => [
      rateLimitItem(POLICY_NAMES.requests, requestsLeft),
      rateLimitItem(POLICY_NAMES.markdownBytes, bytesLeft),
      `"${POLICY_NAMES.markdownRenders}";r=${rendersLeft}`
    ].join(', ')
    reply.header('ratelimit-policy', policyHeader.document)
    const over = ([[POLICY_NAMES.requests, requestStanding], [POLICY_NAMES.markdownBytes, bytesStanding], [POLICY_NAMES.markdownRenders, rendersStanding]] as const)
      .filter(([, standing]) => standing.retryAfterSeconds > 0)
    if (over.length > 0) {
      // The longest wait is the one that lets the request through.
      const [policy, standing] = over.reduce((longest, next) => next[1].retryAfterSeconds > longest[1].retryAfterSeconds ? next : longest)
      // Refused, the request is charged nothing: what is left is what was left before it.
      const uncharged = (counter: QuotaCounter, standing: Standing) => standing.retryAfterSeconds > 0 ? standing : counter.standing(client, 0)
      const rendersLeft = Math.max(0, options.markdownRendersAtOnce - renders)
      return refuse(request, reply, client, policy, standing.retryAfterSeconds, rateLimit(uncharged(requests, requestStanding), uncharged(markdownBytes, bytesStanding), rendersLeft))
    }
    requests.charge(client, 1)
    markdownBytes.charge(client, bytes)
    const document: LimitedDocument = { client, bytes, place: null }
    request.fairShareDocument = document
    if (takesRenderPlace) takeRenderPlace(document, reply, false)
    reply.header('ratelimit', rateLimit(requestStanding, bytesStanding, rendersStanding.remaining))
    done()
  }

  /** A small padded table may need a thread (docs/decisions.md, "Fair share"): takes a place, charged by its cells. */
  function limitTableDocument (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const document = request.fairShareDocument
    if (document === null) return done()
    holdRenderPlaceWhileHandling(document.place)
    const markdown = (request.body as { markdown?: unknown } | undefined)?.markdown
    if (document.place !== null || typeof markdown !== 'string' || rendersQuickly(markdown)) return done()
    const { client, bytes } = document
    if ((rendering.get(client) ?? 0) >= options.markdownRendersAtOnce) {
      return refuse(request, reply, client, POLICY_NAMES.markdownRenders, RENDERS_RETRY_AFTER_SECONDS, `"${POLICY_NAMES.markdownRenders}";r=0`)
    }
    const cost = Math.max(0, Math.min(possibleTableCells(markdown) * BYTES_PER_TABLE_CELL, options.bodyLimit) - bytes)
    const standing = markdownBytes.standing(client, cost)
    if (standing.retryAfterSeconds > 0) {
      return refuse(request, reply, client, POLICY_NAMES.markdownBytes, standing.retryAfterSeconds, rateLimitItem(POLICY_NAMES.markdownBytes, standing))
    }
    markdownBytes.charge(client, cost)
    takeRenderPlace(document, reply, true)
    done()
  }

  const releaseAfterRender: onSendHookHandler = (request, _reply, payload, done) => {
    const place = request.fairShareDocument?.place
    if (place != null) releaseRenderPlace(place)
    done(null, payload)
  }

  fastify.decorateRequest('fairShareDocument', null)
  const hookFor: Record<FairShareCharge, onRequestHookHandler> = { request: limitRequest, document: limitDocument }
  fastify.addHook('onRoute', (route) => {
    const charge = route.config?.fairShare
    if (charge === undefined) {
      if (route.url.startsWith('/api/')) throw new Error(`${route.url} is an API route without config.fairShare: every API route is limited per client`)
      return
    }
    route.onRequest = [...[route.onRequest ?? []].flat(), hookFor[charge]]
    if (charge === 'document') {
      route.preHandler = [limitTableDocument, ...[route.preHandler ?? []].flat()]
      route.onSend = [...[route.onSend ?? []].flat(), releaseAfterRender]
    }
  })

  fastify.decorate('fairShare', { refusals: () => refusals.values() } satisfies FairShare)
}, { name: 'fair-share', dependencies: ['errors'] })
