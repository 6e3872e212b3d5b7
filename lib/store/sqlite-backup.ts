import { randomBytes } from 'node:crypto'
import { existsSync, linkSync, renameSync, rmSync } from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import BetterSqlite3ForThisNode from './better-sqlite3.js'
import { DatabaseSetupError } from './connect.js'

/** All remaining pages in one step: one snapshot, never restarted by a write. */
const ALL_PAGES = 0x7fffffff
const LOCK_WAIT_MS = 200

export interface BackupContents {
  users: number
  sessions: number
}

/** Leaves the inherited WAL to checkpoint its `-wal` pages in: one self-contained file (the service resets WAL). */
function settle (file: string): void {
  const copy = new BetterSqlite3ForThisNode(file, { fileMustExist: true })
  try {
    copy.pragma('journal_mode = DELETE')
  } finally {
    copy.close()
  }
}

/** Checks a copy whole, read-only, and counts what it holds; throws unless it is a sound Meridian database. */
function checkedCopy (file: string): BackupContents {
  let copy: BetterSqlite3.Database
  try {
    copy = new BetterSqlite3ForThisNode(file, { readonly: true, fileMustExist: true })
  } catch (error) {
    throw new DatabaseSetupError(
      `${file} cannot be opened as an SQLite database: ${(error as Error).message}`,
      { cause: error }
    )
  }
  try {
    let check: unknown
    try {
      check = copy.pragma('integrity_check', { simple: true })
    } catch (error) {
      throw new DatabaseSetupError(
        `${file} is not a sound SQLite database: ${(error as Error).message}`,
        { cause: error }
      )
    }
    if (check !== 'ok') throw new DatabaseSetupError(`${file} fails SQLite's integrity check: ${String(check)}`)
    const tables = new Set(
      copy.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[]
    )
    if (!tables.has('kysely_migration') || !tables.has('users')) {
      throw new DatabaseSetupError(`${file} is not a Meridian database (no users or migrations)`)
    }
    const count = (table: string): number =>
      tables.has(table) ? copy.prepare(`select count(*) from ${table}`).pluck().get() as number : 0
    return { users: count('users'), sessions: count('sessions') }
  } finally {
    copy.close()
  }
}

/** One online-backup snapshot, linked to `destination` only once checked; never overwrites a file. */
export async function backupSqlite (databaseFile: string, destination: string): Promise<BackupContents> {
  if (existsSync(destination)) throw new DatabaseSetupError(`${destination} exists: back up to a new file`)
  if (!existsSync(databaseFile)) throw new DatabaseSetupError(`there is no database at ${databaseFile}`)
  const partial = `${destination}.${randomBytes(6).toString('hex')}.partial`
  const database = new BetterSqlite3ForThisNode(databaseFile, { fileMustExist: true, timeout: LOCK_WAIT_MS })
  try {
    await database.backup(partial, { progress: () => ALL_PAGES })
    settle(partial)
    const contents = checkedCopy(partial)
    try {
      linkSync(partial, destination)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      throw new DatabaseSetupError(`${destination} exists: back up to a new file`, { cause: error })
    }
    return contents
  } finally {
    database.close()
    for (const leftover of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(leftover, { force: true })
  }
}

/** Refuses while any process has the database open: it would keep its old file. */
export async function restoreSqlite (backupFile: string, databaseFile: string): Promise<BackupContents> {
  const contents = checkedCopy(backupFile)
  const restoring = `${databaseFile}.${randomBytes(6).toString('hex')}.restoring`
  try {
    // The long part first, while the service may still be stopping.
    const source = new BetterSqlite3ForThisNode(backupFile, { readonly: true, fileMustExist: true })
    try {
      await source.backup(restoring, { progress: () => ALL_PAGES })
    } finally {
      source.close()
    }
    settle(restoring)
    const held = existsSync(databaseFile) ? holdAlone(databaseFile) : undefined
    try {
      // The old database's write-ahead log must not be replayed onto the restored file.
      for (const leftover of [`${databaseFile}-wal`, `${databaseFile}-shm`]) rmSync(leftover, { force: true })
      renameSync(restoring, databaseFile)
    } finally {
      held?.exec('ROLLBACK')
      held?.close()
    }
    return contents
  } finally {
    for (const leftover of [restoring, `${restoring}-wal`, `${restoring}-shm`]) rmSync(leftover, { force: true })
  }
}

/** Alone on the database, out of WAL, in an exclusive transaction; refuses if another process has it open. */
function holdAlone (databaseFile: string): BetterSqlite3.Database {
  const held = new BetterSqlite3ForThisNode(databaseFile, { fileMustExist: true, timeout: LOCK_WAIT_MS })
  try {
    // Leaving WAL mode checkpoints the log and needs every other connection gone.
    if (held.pragma('journal_mode = DELETE', { simple: true }) !== 'delete') {
      throw Object.assign(new Error('still in WAL mode'), { code: 'SQLITE_BUSY' })
    }
    held.exec('BEGIN EXCLUSIVE')
    return held
  } catch (error) {
    held.close()
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error
    throw new DatabaseSetupError(
      `${databaseFile} is in use by another process: stop every replica and CLI command using it ` +
        '(docker stop, or SIGTERM), then restore',
      { cause: error }
    )
  }
}
