import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { skipIfMissing } from './requirements.js'

export const postgresUrl = process.env.TEST_DATABASE_URL
export const postgresSkip = skipIfMissing(postgresUrl === undefined && 'PostgreSQL missing: set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)')

export interface PostgresDatabase {
  name: string
  url: string
  /** Drops it, with any connection still open to it. */
  drop: () => Promise<void>
}

/**
 * An empty database on the server of `serverUrl` (TEST_DATABASE_URL by default), named
 * `<prefix>_<random>`. The caller drops it; `postgresDatabase(t)` does that for a test.
 */
export async function createPostgresDatabase (serverUrl = postgresUrl, prefix = 'meridian_test'): Promise<PostgresDatabase> {
  if (serverUrl === undefined) throw new Error('no PostgreSQL server: set TEST_DATABASE_URL')
  // A connection per statement, none held between them: a test may restart the server meanwhile.
  const onServer = async (statement: string) => {
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    try {
      await admin.query(statement)
    } finally {
      await admin.end()
    }
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  await onServer(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: async () => { await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
  }
}

/** A PostgreSQL database of the test's own (TEST_DATABASE_URL's server), dropped when the test ends; its URL. */
export async function postgresDatabase (t: Test, prefix?: string): Promise<string> {
  const database = await createPostgresDatabase(postgresUrl, prefix)
  t.teardown(database.drop)
  return database.url
}
