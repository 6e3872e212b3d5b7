import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { build, testConfig, TEST_JWT_SECRET } from './helper.js'

const cliPath = fileURLToPath(new URL('../dist/cli.js', import.meta.url))

/** Runs the built CLI without blocking this process, whose event loop serves the app under test. */
async function meridian (args: string[], env: Record<string, string>, input = '', cwd?: string) {
  const child = spawn(process.execPath, [cliPath, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd, timeout: 60_000 })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdin.end(input)
  const [status] = await once(child, 'close') as [number | null]
  return { status, stdout, stderr }
}

t.before(() => {
  if (!existsSync(cliPath)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does it first)')
})

t.test('user add, passwd and remove work on the database of a running app', async (t) => {
  const app = await build(t)
  const env = { DATABASE_URL: `sqlite:${app.store.sqliteFile as string}`, JWT_SECRET: TEST_JWT_SECRET }
  const loginAs = async (password: string) => await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'cli-user', password } })

  const added = await meridian(['user', 'add', '--username', 'cli-user', '--name', 'Cli User', '--birthdate', '1980-05-05', '--gender', 'female', '--short-desc', 'Made by the CLI'], env, 'first-password\n')
  t.equal(added.status, 0, added.stderr)
  t.match(added.stdout, /added user cli-user with id \d+/)
  const loggedIn = await loginAs('first-password')
  t.equal(loggedIn.statusCode, 200, 'the server sees the new user at once')
  const token = loggedIn.json().access_token as string
  const pageResponse = await app.inject({ url: `/api/user/list?access_token=${token}` })
  t.equal(pageResponse.statusCode, 200, pageResponse.body)
  const page = pageResponse.json()
  t.match(page.data[0], { name: 'Cli User', birthdate: '1980-05-05', gender: 'female', short_desc: 'Made by the CLI' })

  const duplicate = await meridian(['user', 'add', '--username', 'cli-user'], env, 'x\n')
  t.equal(duplicate.status, 1)
  t.match(duplicate.stderr, 'already exists')

  const changed = await meridian(['user', 'passwd', 'cli-user'], env, 'second-password\n')
  t.equal(changed.status, 0, changed.stderr)
  t.equal((await loginAs('first-password')).statusCode, 403, 'the old password is refused')
  t.equal((await app.inject({ url: `/api/user/list?access_token=${token}` })).statusCode, 403, 'earlier tokens are revoked')
  const second = (await loginAs('second-password')).json().access_token as string

  const removed = await meridian(['user', 'remove', 'cli-user'], env)
  t.equal(removed.status, 0, removed.stderr)
  t.equal((await app.inject({ url: `/api/user/list?access_token=${second}` })).statusCode, 403, 'a removed user\'s token is refused')
  t.equal((await loginAs('second-password')).statusCode, 403)

  t.equal((await meridian(['user', 'remove', 'cli-user'], env)).status, 1, 'removing an unknown user fails')
  t.equal((await meridian(['user', 'passwd', 'nobody'], env, 'x')).status, 1, 'passwd of an unknown user fails')
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
    t.equal(result.status, 1, args.join(' '))
    t.match(result.stderr, mention)
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line')
  }
})

t.test('migrate is idempotent', async (t) => {
  const env = { DATABASE_URL: testConfig(t).DATABASE_URL }
  const first = await meridian(['migrate'], env)
  t.equal(first.status, 0, first.stderr)
  t.equal(first.stdout, 'applied 0001_users\n', 'the first run says what it applied')
  const second = await meridian(['migrate'], env)
  t.equal(second.status, 0)
  t.match(second.stdout, 'up to date')
})

t.test('openapi prints the document without listening or touching a database', async (t) => {
  const directory = t.testdir()
  const result = await meridian(['openapi'], {}, '', directory)
  t.equal(result.status, 0, result.stderr)
  const document = JSON.parse(result.stdout)
  t.match(document.openapi, /^3\./)
  t.ok(document.paths['/api/user/list'])
  t.same(readdirSync(directory), [], 'no database or key file was written')
})

t.test('unknown commands and bad configuration fail clearly', async (t) => {
  const unknown = await meridian(['frobnicate'], {})
  t.equal(unknown.status, 1)
  t.match(unknown.stderr, 'Usage: meridian')
  const help = await meridian(['--help'], {})
  t.equal(help.status, 0)
  t.match(help.stdout, 'user add --username U')
  const badPort = await meridian(['serve'], { PORT: 'eighty', DATABASE_URL: `sqlite:${join(t.testdir(), 'x.db')}` })
  t.equal(badPort.status, 1)
  t.match(badPort.stderr, /^meridian: Invalid configuration: PORT/)
  t.equal(badPort.stderr.trim().split('\n').length, 1, 'one line')
})
