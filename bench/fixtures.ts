/** What the bench's parts start from: databases of their own, the bench user's tokens, the requests of each route. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { type BenchRequest, type ChildServer, JSON_HEADERS } from './harness.js'
import { BENCH_USER } from './servers.js'

/** The directories of sqliteUrl's databases, removed at exit by one listener. */
const sqliteDirectories: string[] = []
process.once('exit', () => { for (const directory of sqliteDirectories) rmSync(directory, { recursive: true, force: true }) })

/** A SQLite database of its own, removed at exit. */
export function sqliteUrl (): string {
  const directory = mkdtempSync(join(tmpdir(), 'meridian-bench-'))
  sqliteDirectories.push(directory)
  return `sqlite:${join(directory, 'meridian.db')}`
}

let databasesMade = 0

/** A database of its own on the PostgreSQL server, dropped at `drop`; undefined if none answers. */
export async function postgresUrl (): Promise<{ url: string, drop: () => Promise<void> } | undefined> {
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  if (server === 'none') return undefined
  const admin = new pg.Client({ connectionString: server, connectionTimeoutMillis: 2000 })
  try {
    await admin.connect()
  } catch {
    return undefined
  }
  const name = `meridian_bench_${process.pid}_${databasesMade++}`
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return { url: url.href, drop: async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end() } }
}

export interface Tokens { access_token: string, refresh_token: string }

/** The bench user's tokens; a service that has just seeded may answer 503 (pressure) for a moment. */
export async function logIn (url: string): Promise<Tokens> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(BENCH_USER) })
    if (response.status === 200) return await response.json() as Tokens
    await response.arrayBuffer()
    if (response.status !== 503 || attempt === 60) throw new Error(`bench login answered ${response.status}`)
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

export const listRequest = (tokens: Tokens, page = 1): BenchRequest =>
  ({ method: 'GET', path: `/api/user/list?access_token=${tokens.access_token}${page === 1 ? '' : `&page=${page}`}` })
export const refreshRequest = (tokens: Tokens): BenchRequest =>
  ({ method: 'POST', path: '/api/auth/refresh', headers: JSON_HEADERS, body: JSON.stringify({ refresh_token: tokens.refresh_token }) })

export async function withServers<T> (servers: Array<Promise<ChildServer>>, use: (servers: ChildServer[]) => Promise<T>): Promise<T> {
  const started = await Promise.all(servers)
  try {
    return await use(started)
  } finally {
    await Promise.all(started.map(async (server) => { await server.stop() }))
  }
}

export type SetupClient = (client: { setRequests: (requests: BenchRequest[]) => void }) => void

/** Every connection walks the queries from its own offset. */
export function staggeredOver (requests: BenchRequest[]): SetupClient {
  let next = 0
  return (client) => {
    const offset = (next++ % 20) * 200
    client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)])
  }
}
