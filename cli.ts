#!/usr/bin/env node
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, readEnv } from './config.js'
import { hashPassword } from './lib/auth/passwords.js'
import { seedUsers } from './lib/users/seed-users.js'
import { DatabaseSetupError } from './lib/store/connect.js'
import { isPostgresConnectionFailure } from './lib/store/unavailable.js'
import { sqliteFileOf } from './lib/store/database-url.js'
import { backupSqlite, restoreSqlite } from './lib/store/sqlite-backup.js'
import { Database, UsernameTakenError } from './lib/store/database.js'

const USAGE = `Usage: meridian <command>

  serve                                   start the HTTP server (HOST:PORT)
  migrate                                 bring the database schema up to date
  user add --username U [--name N] [--birthdate YYYY-MM-DD] [--gender G] [--short-desc S]
                                          add a user; the password is read from standard input
  user passwd U                           set U's password from standard input (revokes U's tokens)
  user remove U                           remove U (revokes U's tokens)
  user logout U                           end every session of U (their tokens stop working; the
                                          password stays)
  user sessions U                         list U's open sessions: start, last use, expiry
  user seed --count N                     add N plausible users, all with the password read from
                                          standard input (for demos and load tests)
  backup FILE                             copy the SQLite database to FILE, checked whole; safe while the
                                          server runs (PostgreSQL: pg_dump, docs/operations.md)
  restore FILE                            replace the SQLite database with the backup FILE; refuses
                                          while any process has the database open
  openapi                                 print the OpenAPI document

Every command uses DATABASE_URL, like the server; all but restore are safe while the server runs.`

/** A failure the user caused: one line on stderr, exit code 1, no stack. */
class UsageError extends Error {}

async function readPassword (): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (end with Ctrl-D): ')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
  if (password.length === 0) throw new UsageError('a password is required on standard input')
  if (password.length > 1024) throw new UsageError('the password is longer than 1024 characters')
  return password
}

function onlyFile (command: string, args: Array<string | undefined>): string {
  const files = args.filter((arg): arg is string => arg !== undefined)
  if (files.length !== 1 || files[0]!.startsWith('-')) throw new UsageError(`usage: meridian ${command} FILE`)
  return files[0]!
}

function isRealDate (text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const date = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text)
}

/** Opens the store with its schema up to date; `action` also learns which migrations this applied. */
async function withStore<T> (action: (store: Database, applied: string[]) => Promise<T>): Promise<T> {
  const store = Database.open(readEnv().DATABASE_URL)
  try {
    const applied = await store.migrate()
    return await action(store, applied)
  } finally {
    await store.close()
  }
}

async function addUser (args: string[]): Promise<string> {
  const { values } = parseArgs({
    args,
    options: {
      username: { type: 'string' },
      name: { type: 'string' },
      birthdate: { type: 'string' },
      gender: { type: 'string' },
      'short-desc': { type: 'string' }
    }
  })
  const username = values.username
  if (username === undefined || username.length === 0 || username.length > 128) {
    throw new UsageError('--username is required (1 to 128 characters)')
  }
  const today = new Date().toISOString().slice(0, 10)
  const birthdate = values.birthdate ?? today
  if (!isRealDate(birthdate) || birthdate > today) throw new UsageError('--birthdate must be a past date as YYYY-MM-DD')
  const passwordHash = await hashPassword(await readPassword())
  return await withStore(async (store) => {
    try {
      const user = await store.add({
        username,
        passwordHash,
        name: values.name ?? username,
        birthdate,
        gender: values.gender ?? 'unspecified',
        shortDesc: values['short-desc'] ?? ''
      })
      return `added user ${user.username} with id ${user.id}`
    } catch (error) {
      if (error instanceof UsernameTakenError) throw new UsageError(`a user named ${username} already exists`)
      throw error
    }
  })
}

async function seed (args: string[]): Promise<string> {
  const { values } = parseArgs({ args, options: { count: { type: 'string' } } })
  const count = Number(values.count)
  if (values.count === undefined || !/^\d+$/.test(values.count) || count < 1 || count > 100_000_000) {
    throw new UsageError('--count is required: a whole number of users from 1 to 100000000')
  }
  const passwordHash = await hashPassword(await readPassword())
  const started = performance.now()
  const run = await withStore(async (store) => await seedUsers(store, {
    count,
    passwordHash,
    onProgress: (inserted) => {
      if (inserted % 100_000 === 0 || inserted === count) {
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        process.stderr.write(`seeded ${inserted} of ${count} users (${seconds} s)\n`)
      }
    }
  }))
  return `added ${count} users named seed-${run}-0 to seed-${run}-${count - 1}`
}

function onlyUsername (args: string[]): string {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  if (positionals.length !== 1 || positionals[0] === '') throw new UsageError('give exactly one username')
  return positionals[0] as string
}

const shownTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

async function userIdOf (store: Database, username: string): Promise<number> {
  const user = await store.findByUsername(username)
  if (user === undefined) throw new UsageError(`no user named ${username}`)
  return user.id
}

/** The user's open sessions, one a line, never a token or a session id. */
async function listSessions (store: Database, username: string): Promise<string> {
  const sessions = await store.sessions.listOpen(await userIdOf(store, username))
  if (sessions.length === 0) return `${username} has no open sessions`
  const rows = sessions.map((session) =>
    [session.startedAt, session.lastUsedAt, session.expiresAt].map(shownTime).join('  '))
  return [`${'started'.padEnd(20)}  ${'last used'.padEnd(20)}  expires`, ...rows].join('\n')
}

async function endSessions (store: Database, username: string): Promise<string> {
  const ended = await store.sessions.endAllOf(await userIdOf(store, username), 'operator')
  return ended === 0
    ? `${username} has no open sessions`
    : `ended ${ended} session${ended === 1 ? '' : 's'} of ${username}; their tokens no longer work`
}

async function run (argv: string[]): Promise<string | undefined> {
  const [command, subcommand, ...rest] = argv
  switch (command) {
    case 'serve': {
      // The server's modules load only for the commands that need them: user commands start fast.
      const { serve } = await import('./server.js')
      await serve(loadConfig())
      return undefined
    }
    case 'migrate': {
      const applied = await withStore(async (_store, applied) => applied)
      return applied.length === 0 ? 'database schema is up to date' : `applied ${applied.join(', ')}`
    }
    case 'backup':
    case 'restore': {
      const file = onlyFile(command, [subcommand, ...rest])
      const databaseFile = sqliteFileOf(readEnv().DATABASE_URL)
      if (databaseFile === undefined) {
        throw new UsageError(`${command} copies an SQLite database; for PostgreSQL use pg_dump and pg_restore ` +
          '(docs/operations.md, "Back up and restore")')
      }
      if (command === 'backup') {
        const { users, sessions } = await backupSqlite(databaseFile, file)
        return `backed up ${users} users and ${sessions} sessions to ${file} (integrity check: ok)`
      }
      const { users, sessions } = await restoreSqlite(file, databaseFile)
      return `restored ${file} into ${databaseFile}: ${users} users, ${sessions} sessions; start the service again`
    }
    case 'openapi': {
      // Nothing is listened on or written: a throwaway key and an in-memory database.
      const config = loadConfig({
        ...process.env,
        DATABASE_URL: 'sqlite::memory:',
        JWT_SECRET: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent'
      })
      const { buildApp } = await import('./app.js')
      const app = await buildApp(config)
      await app.ready()
      const document = JSON.stringify(app.swagger(), null, 2)
      await app.close()
      return document
    }
    case 'user':
      switch (subcommand) {
        case 'add':
          return await addUser(rest)
        case 'passwd': {
          const username = onlyUsername(rest)
          const passwordHash = await hashPassword(await readPassword())
          const changed = await withStore(async (store) => await store.changePassword(username, passwordHash))
          if (!changed) throw new UsageError(`no user named ${username}`)
          return `changed the password of ${username}; their earlier tokens no longer work`
        }
        case 'seed':
          return await seed(rest)
        case 'remove': {
          const username = onlyUsername(rest)
          const removed = await withStore(async (store) => await store.remove(username))
          if (!removed) throw new UsageError(`no user named ${username}`)
          return `removed ${username}`
        }
        case 'logout': {
          const username = onlyUsername(rest)
          return await withStore(async (store) => await endSessions(store, username))
        }
        case 'sessions': {
          const username = onlyUsername(rest)
          return await withStore(async (store) => await listSessions(store, username))
        }
      }
      throw new UsageError(USAGE)
    case undefined:
    case 'help':
    case '--help':
      return USAGE
    default:
      throw new UsageError(USAGE)
  }
}

/** DATABASE_URL or the server's set-up is wrong, not the code (3D000, 28, 42501, 08, 53, 57P01-57P03). */
function isPostgresSetupError (error: unknown): boolean {
  const { code, severity } = error as { code?: unknown, severity?: unknown }
  return typeof code === 'string' && typeof severity === 'string' && /^(08|28|3D|53|57P0[1-3])|^42501$/.test(code)
}

try {
  const output = await run(process.argv.slice(2))
  if (output !== undefined) process.stdout.write(`${output}\n`)
} catch (error) {
  // What the operator can act on (usage, configuration, a port in use, an unknown host) is one line.
  const isSystemError = typeof (error as NodeJS.ErrnoException).syscall === 'string'
  const isExpected = error instanceof UsageError || error instanceof ConfigError ||
    error instanceof DatabaseSetupError || isSystemError ||
    (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
  // node-postgres reports a server that accepts but never answers as a bare Error: the operator's to fix too.
  const message = isPostgresSetupError(error) || isPostgresConnectionFailure(error)
    ? `PostgreSQL: ${(error as Error).message}`
    : isExpected ? (error as Error).message : ((error as Error).stack ?? String(error))
  process.stderr.write(`meridian: ${message}\n`)
  process.exitCode = 1
}
