import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { OpenSessions } from '../../lib/auth/open-sessions.js'
import { SessionPruner } from '../../lib/auth/session-pruner.js'
import type { OpenSession, SessionEndCause, SessionId, SessionRecord } from '../../lib/store/session-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    sessions: Sessions
  }
}

export interface SessionsOptions {
  /** A session's lifetime, which its refresh token's is: REFRESH_TOKEN_TTL. */
  refreshTtlSeconds: number
}

const PRUNE_INTERVAL_MS = 60_000

export interface Sessions {
  /** A new session of the user, expiring after the refresh TTL, on a whole second (its refresh token's `exp`). */
  start: (userId: number) => Promise<SessionRecord>
  /** The session, if it is the user's and has neither ended nor expired; no database read in the steady state. */
  open: (id: SessionId, userId: number) => Promise<OpenSession | undefined>
  /** Ends the user's session (if open); refused on this replica at once, on the others at their next request. */
  end: (id: SessionId, userId: number, cause: SessionEndCause) => Promise<void>
  prune: () => Promise<number>
  readonly started: number
  readonly pruned: Readonly<SessionPruner['pruned']>
}

export default fp(async function sessions (fastify: FastifyInstance, options: SessionsOptions) {
  const store = fastify.database.sessions
  const openSessions = new OpenSessions(store, () => fastify.users.latest?.sessionsVersion)
  const pruner = new SessionPruner(store, PRUNE_INTERVAL_MS,
    (error) => { fastify.log.warn({ err: error }, 'could not prune ended sessions; will try again') })
  let started = 0

  fastify.decorate('sessions', {
    async start (userId: number) {
      const expiresAt = Math.ceil((Date.now() + options.refreshTtlSeconds * 1000) / 1000) * 1000
      const session = await store.start(userId, expiresAt)
      started++
      return session
    },
    async open (id: SessionId, userId: number) {
      return await openSessions.open(id, userId)
    },
    async end (id: SessionId, userId: number, cause: SessionEndCause) {
      await store.end(id, userId, cause)
      openSessions.forget(id)
    },
    async prune () {
      return await pruner.prune()
    },
    get started () { return started },
    pruned: pruner.pruned
  } satisfies Sessions)

  fastify.addHook('onReady', async () => { pruner.start() })
  // Runs before the store's own onClose (hooks close in reverse order), while it can still write.
  fastify.addHook('onClose', async () => { await pruner.close() })
}, { name: 'sessions', dependencies: ['database', 'users'] })
