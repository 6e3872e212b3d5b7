import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions } from '../../app.js'
import { type Config, loadConfig } from '../../config.js'
import { hashPassword } from '../../lib/auth/passwords.js'
import type { UserRecord } from '../../lib/store/database.js'
import { checkResponsesAgainstDocument } from './conformance.js'

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long'

/** A configuration as production reads it, on a fresh SQLite file in the test's own directory. */
export function testConfig (t: Test, env: Record<string, string> = {}): Config {
  // A directory per call (t.testdir() would empty the test's one directory on each call).
  const directory = mkdtempSync(join(tmpdir(), 'meridian-test-'))
  t.teardown(() => { rmSync(directory, { recursive: true, force: true }) })
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: `sqlite:${join(directory, 'meridian.db')}`,
    JWT_SECRET: TEST_JWT_SECRET,
    // inject's address: a test is one client sending far more than its fair share. The tests of
    // the limits (test/plugins/fair-share.test.ts) set their own.
    RATE_LIMIT_EXEMPT: '127.0.0.1',
    ...env
  })
}

/**
 * The real app, from the same factory as production, closed when the test ends. The one
 * difference: the event-loop-delay 503 is off (test/plugins/pressure.test.ts tests it), because
 * parallel test processes stall each other's event loops for seconds.
 */
export async function build (t: Test, env: Record<string, string> = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = await buildUnready(t, env, options)
  await app.ready()
  return app
}

/**
 * As `build`, before `ready()`: a test may still add routes or hooks. Every response the app
 * sends is checked against the published OpenAPI document (test/support/conformance.ts): an undocumented
 * status or a body off its schema fails the test that produced it.
 */
export async function buildUnready (t: Test, env: Record<string, string> = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(t, env), { maxEventLoopDelayMs: 0, ...options })
  checkResponsesAgainstDocument(app, (message, details) => { t.fail(message, { diagnostic: true, ...details }) })
  t.teardown(async () => { await app.close() })
  return app
}

export interface TestUserInput {
  username: string
  password: string
  name?: string
  birthdate?: string
  gender?: string
  shortDesc?: string
}

export async function addUser (app: FastifyInstance, input: TestUserInput): Promise<UserRecord> {
  return await app.database.add({
    username: input.username,
    passwordHash: await hashPassword(input.password),
    name: input.name ?? input.username,
    birthdate: input.birthdate ?? '1990-06-15',
    gender: input.gender ?? 'unspecified',
    shortDesc: input.shortDesc ?? ''
  })
}

export interface Tokens { access_token: string, refresh_token: string, expires_in: number }

export async function login (app: FastifyInstance, username: string, password: string): Promise<Tokens> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
  return response.json<Tokens>()
}

/** Keeps the event loop mostly blocked for `ms`, in slices, so that timers and the delay histogram still run. */
export async function stallEventLoop (ms: number): Promise<void> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    const sliceEnd = Date.now() + 40
    while (Date.now() < sliceEnd) { /* busy */ }
    await new Promise((resolve) => setImmediate(resolve))
  }
}
