import { once } from 'node:events'
import { existsSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { addUser, build, login, testConfig, TEST_JWT_SECRET } from '../support/helper.js'
import { sessionIdOf } from '../support/forge.js'
import { postgresDatabase, postgresSkip } from '../support/postgres.js'
import { type CliResult, runMeridian } from '../support/meridian.js'
import { cliPath } from '../support/repository.js'

/** The built CLI with `env` and the PATH, killed after a minute. */
async function meridian (args: string[], env: Record<string, string>, input = '', cwd?: string): Promise<CliResult> {
  return await runMeridian(args, { PATH: process.env.PATH ?? '', ...env }, input, { cwd, timeoutMs: 60_000 })
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does it first)')
})

t.test('user add, passwd and remove work on the database of a running app', async (t) => {
  const app = await build(t)
  const env = { DATABASE_URL: `sqlite:${app.database.sqliteFile as string}`, JWT_SECRET: TEST_JWT_SECRET }
  const loginAs = async (password: string) => await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'cli-user', password } })

  const added = await meridian(['user', 'add', '--username', 'cli-user', '--name', 'Cli User', '--birthdate', '1980-05-05', '--gender', 'female', '--short-desc', 'Made by the CLI'], env, 'first-password\n')
  t.equal(added.code, 0, added.stderr)
  t.match(added.stdout, /added user cli-user with id \d+/)
  const loggedIn = await loginAs('first-password')
  t.equal(loggedIn.statusCode, 200, 'the server sees the new user at once')
  const token = loggedIn.json().access_token as string
  const pageResponse = await app.inject({ url: `/api/user/list?access_token=${token}` })
  t.equal(pageResponse.statusCode, 200, pageResponse.body)
  const page = pageResponse.json()
  t.match(page.data[0], { name: 'Cli User', birthdate: '1980-05-05', gender: 'female', short_desc: 'Made by the CLI' })

  const duplicate = await meridian(['user', 'add', '--username', 'cli-user'], env, 'x\n')
  t.equal(duplicate.code, 1)
  t.match(duplicate.stderr, 'already exists')

  const changed = await meridian(['user', 'passwd', 'cli-user'], env, 'second-password\n')
  t.equal(changed.code, 0, changed.stderr)
  t.equal((await loginAs('first-password')).statusCode, 403, 'the old password is refused')
  t.equal((await app.inject({ url: `/api/user/list?access_token=${token}` })).statusCode, 403, 'earlier tokens are revoked')
  const second = (await loginAs('second-password')).json().access_token as string
  t.equal((await app.inject({ url: `/api/user/list?access_token=${second}` })).statusCode, 200, 'a token used once, so the caches hold it when it is revoked')

  const removed = await meridian(['user', 'remove', 'cli-user'], env)
  t.equal(removed.code, 0, removed.stderr)
  t.equal((await app.inject({ url: `/api/user/list?access_token=${second}` })).statusCode, 403, 'a removed user\'s token is refused')
  t.equal((await loginAs('second-password')).statusCode, 403)

  t.equal((await meridian(['user', 'remove', 'cli-user'], env)).code, 1, 'removing an unknown user fails')
  t.equal((await meridian(['user', 'passwd', 'nobody'], env, 'x')).code, 1, 'passwd of an unknown user fails')
})

/** `user sessions` and `user logout` on a running app's database: listed without a token, ended at once. */
async function sessionsFromTheCli (t: Test, env: Record<string, string>) {
  const app = await build(t, env)
  const cliEnv = { JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: env.DATABASE_URL ?? `sqlite:${app.database.sqliteFile as string}` }
  await addUser(app, { username: 'ada', password: 'ada-password' })
  await addUser(app, { username: 'grace', password: 'grace-password' })
  const none = await meridian(['user', 'sessions', 'ada'], cliEnv)
  t.same([none.code, none.stdout, none.stderr], [0, 'ada has no open sessions\n', ''])
  const before = Date.now()
  const sessions = [await login(app, 'ada', 'ada-password'), await login(app, 'ada', 'ada-password')]
  const graces = await login(app, 'grace', 'grace-password')

  const listed = await meridian(['user', 'sessions', 'ada'], cliEnv)
  t.equal(listed.code, 0, listed.stderr)
  const [heading, ...rows] = listed.stdout.trim().split('\n')
  t.match(heading, /^started\s+last used\s+expires$/)
  t.equal(rows.length, 2, 'one line per open session')
  for (const row of rows) {
    const [started, lastUsed, expires] = (row.split(/\s+/)).map((text) => Date.parse(text))
    t.ok((started ?? 0) >= before - 1000 && started === lastUsed, `${row}: started at the login, not used since`)
    t.equal(Math.round(((expires ?? 0) - (started ?? 0)) / 86_400_000), 30, `${row}: expires with the refresh token, 30 days on`)
  }
  const secrets = [...sessions, graces].flatMap((pair) => [pair.access_token, pair.refresh_token, sessionIdOf(pair.refresh_token)])
  t.notOk(secrets.some((secret) => listed.stdout.includes(secret)), 'no token and no session id is shown')

  const ended = await meridian(['user', 'logout', 'ada'], cliEnv)
  t.same([ended.code, ended.stdout], [0, 'ended 2 sessions of ada; their tokens no longer work\n'], ended.stderr)
  // On SQLite the app's next request reads the counters; on PostgreSQL the database tells the app, within
  // milliseconds and 1 s at most: wait for the first token's refusal there, then every token must be refused.
  const started = performance.now()
  while (env.DATABASE_URL !== undefined && performance.now() - started < 1000 &&
    (await app.inject({ url: `/api/user/list?access_token=${sessions[0]!.access_token}` })).statusCode !== 403) await new Promise((resolve) => setTimeout(resolve, 5))
  for (const pair of sessions) {
    t.equal((await app.inject({ url: `/api/user/list?access_token=${pair.access_token}` })).statusCode, 403, 'the running app refuses the access tokens at once')
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } })).statusCode, 400, 'and the refresh tokens')
  }
  t.equal((await app.inject({ url: `/api/user/list?access_token=${graces.access_token}` })).statusCode, 200, 'another user\'s session goes on')
  t.equal((await login(app, 'ada', 'ada-password')).expires_in, 3600, 'the password is untouched')
  t.equal((await meridian(['user', 'logout', 'grace'], cliEnv)).stdout, 'ended 1 session of grace; their tokens no longer work\n')
  t.equal((await meridian(['user', 'logout', 'grace'], cliEnv)).stdout, 'grace has no open sessions\n')
  for (const command of ['logout', 'sessions']) {
    const unknown = await meridian(['user', command, 'nobody'], cliEnv)
    t.same([unknown.code, unknown.stderr], [1, 'meridian: no user named nobody\n'], `${command} of an unknown user`)
  }
}

t.test('user sessions and user logout on the embedded database', async (t) => { await sessionsFromTheCli(t, {}) })

t.test('user sessions and user logout on PostgreSQL', { skip: postgresSkip }, async (t) => {
  await sessionsFromTheCli(t, { DATABASE_URL: await postgresDatabase(t) })
})

t.test('user add refuses bad input with one line and exit code 1', async (t) => {
  const env = { DATABASE_URL: testConfig(t).DATABASE_URL }
  const cases: Array<[string[], string, string]> = [
    [['user', 'add'], 'pw', '--username'],
    [['user', 'add', '--username', 'u', '--birthdate', '1990-02-30'], 'pw', '--birthdate'],
    [['user', 'add', '--username', 'u', '--birthdate', '3000-01-01'], 'pw', '--birthdate'],
    [['user', 'add', '--username', 'u'], '', 'password'],
    [['user', 'add', '--username', 'u', '--bogus', 'x'], 'pw', 'bogus']
  ]
  for (const [args, input, mention] of cases) {
    const result = await meridian(args, env, input)
    t.equal(result.code, 1, args.join(' '))
    t.match(result.stderr, mention)
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line')
  }
})

t.test('migrate is idempotent', async (t) => {
  const env = { DATABASE_URL: testConfig(t).DATABASE_URL }
  const first = await meridian(['migrate'], env)
  t.equal(first.code, 0, first.stderr)
  t.equal(first.stdout, 'applied 0001_users, 0002_user_stats, 0003_user_counters, 0004_sessions\n', 'the first run says what it applied')
  const second = await meridian(['migrate'], env)
  t.equal(second.code, 0)
  t.match(second.stdout, 'up to date')
})

t.test('openapi prints the document without listening or touching a database', async (t) => {
  const directory = t.testdir()
  const result = await meridian(['openapi'], {}, '', directory)
  t.equal(result.code, 0, result.stderr)
  const document = JSON.parse(result.stdout)
  t.match(document.openapi, /^3\./)
  t.ok(document.paths['/api/user/list'])
  t.same(readdirSync(directory), [], 'no database or key file was written')
})

t.test('unknown commands and bad configuration fail clearly', async (t) => {
  const unknown = await meridian(['frobnicate'], {})
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, 'Usage: meridian')
  const help = await meridian(['--help'], {})
  t.equal(help.code, 0)
  t.match(help.stdout, 'user add --username U')
  const badPort = await meridian(['serve'], { PORT: 'eighty', DATABASE_URL: `sqlite:${join(t.testdir(), 'x.db')}` })
  t.equal(badPort.code, 1)
  t.match(badPort.stderr, /^meridian: Invalid configuration: PORT/)
  t.equal(badPort.stderr.trim().split('\n').length, 1, 'one line')
})

t.test('serve started while PostgreSQL is away exits 1 with one line (docs/decisions.md)', async (t) => {
  const nothingListens = createServer().listen(0, '127.0.0.1')
  await once(nothingListens, 'listening')
  const { port } = nothingListens.address() as { port: number }
  nothingListens.close()
  await once(nothingListens, 'close')
  const result = await meridian(['serve'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, JWT_SECRET: TEST_JWT_SECRET, PORT: '0' })
  t.equal(result.code, 1)
  t.equal(result.stderr, `meridian: connect ECONNREFUSED 127.0.0.1:${port}\n`)
})

/** `user seed` into a running app's database: the users can log in, and count and pages are right. */
async function seedIntoRunningApp (t: Test, env: Record<string, string>) {
  const app = await build(t, env)
  const cliEnv = { JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: env.DATABASE_URL ?? `sqlite:${app.database.sqliteFile as string}` }
  const seeded = await meridian(['user', 'seed', '--count', '9001'], cliEnv, 'seeded-password\n')
  t.equal(seeded.code, 0, seeded.stderr)
  const [, run] = /added 9001 users named seed-([0-9a-f]+)-0 to seed-\1-9000/.exec(seeded.stdout) ?? []
  t.ok(run, seeded.stdout)
  t.match(seeded.stderr, /seeded 9001 of 9001 users/, 'progress on standard error')
  t.equal(await app.database.count(), 9001)

  const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: `seed-${run as string}-4500`, password: 'seeded-password' } })
  t.equal(login.statusCode, 200, 'a seeded user logs in with the password read once')
  const token = login.json().access_token as string
  const last = (await app.inject({ url: `/api/user/list?access_token=${token}&page=91&per_page=100` })).json()
  t.same(last.meta, { count_total: 9001, count_loaded: 1, current_page: 91, total_pages: 91 })
  const first = (await app.inject({ url: `/api/user/list?access_token=${token}&per_page=100` })).json()
  const users = first.data as Array<{ name: string, birthdate: string, gender: string, short_desc: string, age: number }>
  t.ok(users.every((user) => /^\S+ \S/.test(user.name) && user.age >= 18 && user.age <= 88 && user.short_desc.length > 10), 'plausible names, ages and descriptions')
  t.ok(new Set(users.map((user) => user.name)).size > 50, 'varied names')
  const again = await meridian(['user', 'seed', '--count', '10'], cliEnv, 'other\n')
  t.equal(again.code, 0, 'a second run never clashes with the first')
  t.equal(await app.database.count(), 9011)

  // The server caches pages, the ids every 500 positions and the count: a change by the CLI shows at once.
  const lastPage = async () => (await app.inject({ url: `/api/user/list?access_token=${token}&page=91&per_page=100` })).json()
  const before = await lastPage()
  t.same(before.meta, { count_total: 9011, count_loaded: 11, current_page: 91, total_pages: 91 }, 'users added by the CLI are counted at once')
  t.equal((await meridian(['user', 'remove', `seed-${run as string}-0`], cliEnv)).code, 0)
  const after = await lastPage()
  t.same(after.meta, { count_total: 9010, count_loaded: 10, current_page: 91, total_pages: 91 }, 'a user removed by the CLI at once')
  t.same(after.data.map((user: { id: string }) => user.id), before.data.slice(1).map((user: { id: string }) => user.id),
    'every later user moves up a place, deep pages included')
  t.match((await meridian(['user', 'seed', '--count', 'many'], cliEnv, 'x\n')).stderr, /--count is required/)
}

t.test('user seed on the embedded database', async (t) => { await seedIntoRunningApp(t, {}) })

t.test('a PostgreSQL that refuses DATABASE_URL (unknown role or database) is one line and exit code 1', { skip: postgresSkip }, async (t) => {
  for (const [path, user, what] of [['postgres', 'no_such_role', 'role "no_such_role" does not exist'], ['no_such_database', undefined, 'database "no_such_database" does not exist']] as const) {
    const url = new URL(process.env.TEST_DATABASE_URL as string)
    url.pathname = `/${path}`
    if (user !== undefined) url.username = user
    for (const command of ['serve', 'migrate']) {
      const result = await meridian([command], { DATABASE_URL: url.toString(), JWT_SECRET: TEST_JWT_SECRET, PORT: '0' })
      t.equal(result.code, 1, `${command}: exit code 1`)
      t.equal(result.stderr, `meridian: PostgreSQL: ${what}\n`, `${command}: one line naming what PostgreSQL refused`)
    }
  }
})

t.test('user seed on PostgreSQL', { skip: postgresSkip }, async (t) => {
  await seedIntoRunningApp(t, { DATABASE_URL: await postgresDatabase(t) })
})
