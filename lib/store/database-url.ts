import { resolve } from 'node:path'

/** `sqlite:path/to/file.db` (relative to the working directory) → absolute path; else undefined. */
export function sqliteFileOf (databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined
  if (databaseUrl === 'sqlite::memory:') return ':memory:'
  return resolve(databaseUrl.slice('sqlite:'.length))
}
