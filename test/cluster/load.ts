import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster, HttpAnswer, RequestOptions } from './harness.js'

/** What a load run saw: every request that did not answer 200 is a failure. */
export interface LoadResult {
  done: number
  failed: number
  /** Failures by "METHOD route → status or error", e.g. "POST /api/auth/refresh → 502" or "GET /api/user/list → 503 (Retry-After: 10)". */
  failures: Record<string, number>
  /** When each failure was seen (performance.now()), in order. */
  failureTimes: number[]
  seconds: number
}

export interface Load {
  /** Stops sending, waits for the requests in flight, and reports. */
  stop: () => Promise<LoadResult>
}

const SUN_PLACES = [[51.4779, -0.0015], [40.7128, -74.006], [-33.8688, 151.2093], [69.6496, 18.956]] as const
const MARKDOWN = '# Release notes\n\n' + Array.from({ length: 20 }, (_, i) =>
  `- item ${i}: *emphasis*, \`code\` and a [link](https://example.com/${i})`).join('\n') + '\n'

/** Clients of the load, each a user of its own. */
const LOAD_CONNECTIONS = 8

/** A user of its own for each load connection. */
export async function addLoadUsers (cluster: Cluster): Promise<Array<{ username: string, password: string }>> {
  const users = Array.from({ length: LOAD_CONNECTIONS }, (_, i) => ({ username: `load-${i}`, password: `load-password-${i}` }))
  for (const user of users) await cluster.addUser(user.username, user.password)
  return users
}

/**
 * Requests a second of the whole load. Tens of thousands of requests in a rollout prove "none
 * lost" as well as the machine's ceiling would, and leave a core for the test files that run
 * beside this one.
 */
export const LOAD_REQUESTS_PER_SECOND = 800

/**
 * A bounded, mixed load through the balancer on keep-alive connections: one client a user, each
 * on its own schedule (`requestsPerSecond` shared among them), cycling through sun, the user
 * list, Markdown and a token refresh: two GETs and two POSTs, which a balancer may or may not
 * repeat. A client whose answers come late sends its next request at once, never a burst.
 */
export async function startLoad (cluster: Cluster, users: Array<{ username: string, password: string }>, requestsPerSecond = LOAD_REQUESTS_PER_SECOND, maxRequests = 200_000): Promise<Load> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: users.length })
  const started = performance.now()
  let running = true
  let done = 0
  const failures: Record<string, number> = {}
  const failureTimes: number[] = []
  const send = async (method: 'GET' | 'POST', route: string, path: string, options: RequestOptions = {}): Promise<HttpAnswer | undefined> => {
    done++
    try {
      const answer = await cluster.request(path, { agent, method, timeoutMs: 15_000, ...options })
      if (answer.status === 200) return answer
      // A replica's refusals under load carry Retry-After (10 s: @fastify/under-pressure; 1 s: a
      // full render queue), nginx's own answers never do.
      const retryAfter = answer.headers['retry-after']
      const key = `${method} ${route} → ${answer.status}${retryAfter === undefined ? '' : ` (Retry-After: ${retryAfter})`}`
      failures[key] = (failures[key] ?? 0) + 1
    } catch (error) {
      const key = `${method} ${route} → ${(error as NodeJS.ErrnoException).code ?? String(error)}`
      failures[key] = (failures[key] ?? 0) + 1
    }
    failureTimes.push(performance.now())
    return undefined
  }

  // Every client logged in before the load starts: a test that breaks something after this
  // returns finds it in a steady state, not half-way through its logins.
  const sessions = await Promise.all(users.map(async (user) => await cluster.login(user.username, user.password)))
  const intervalMs = 1000 * users.length / requestsPerSecond
  const client = async (session: { access_token: string, refresh_token: string }, index: number) => {
    let tokens = session
    let nextAt = performance.now() + intervalMs * index / users.length
    for (let step = index; running && done < maxRequests; step++) {
      const wait = nextAt - performance.now()
      if (wait > 0) await sleep(wait)
      nextAt = Math.max(nextAt + intervalMs, performance.now())
      if (!running) break
      switch (step % 4) {
        case 0: {
          const [latitude, longitude] = SUN_PLACES[step % SUN_PLACES.length] as readonly [number, number]
          await send('GET', '/api/date/suninfo', `/api/date/suninfo?timestamp=${1_700_000_000 + step}&latitude=${latitude}&longitude=${longitude}`)
          break
        }
        case 1:
          await send('GET', '/api/user/list', `/api/user/list?page=1&per_page=20&access_token=${encodeURIComponent(tokens.access_token)}`)
          break
        case 2:
          await send('POST', '/api/markdown/parse', '/api/markdown/parse', { json: { markdown: MARKDOWN } })
          break
        default: {
          const answer = await send('POST', '/api/auth/refresh', '/api/auth/refresh', { json: { refresh_token: tokens.refresh_token } })
          if (answer !== undefined) tokens = { ...tokens, access_token: answer.json().access_token }
        }
      }
    }
  }
  const clients = Promise.all(sessions.map(client))

  return {
    async stop () {
      running = false
      await clients
      agent.destroy()
      const failed = Object.values(failures).reduce((sum, count) => sum + count, 0)
      return { done, failed, failures, failureTimes, seconds: (performance.now() - started) / 1000 }
    }
  }
}
