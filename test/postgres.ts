import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { skipIfMissing } from './requirements.js'

export const postgresUrl = process.env.TEST_DATABASE_URL
export const postgresSkip = skipIfMissing(postgresUrl === undefined && 'PostgreSQL missing: set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)')

/** A PostgreSQL database of the test's own (TEST_DATABASE_URL's server), dropped when the test ends; its URL. */
export async function postgresDatabase (t: Test): Promise<string> {
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  const name = `meridian_test_${randomBytes(6).toString('hex')}`
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  })
  const url = new URL(postgresUrl as string)
  url.pathname = `/${name}`
  return url.toString()
}
