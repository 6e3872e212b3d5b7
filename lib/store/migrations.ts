import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Dialect } from './connect.js'

/**
 * Versioned migrations, applied in name order and recorded by Kysely in `kysely_migration`.
 * Never edit one that has shipped: add the next.
 */
function migrationsFor (dialect: Dialect): Record<string, Migration> {
  return {
    '0001_users': {
      async up (db: Kysely<any>) {
        await db.schema.createTable('users')
          .addColumn('id', 'integer', (col) => dialect === 'postgres'
            ? col.primaryKey().generatedAlwaysAsIdentity()
            : col.primaryKey().autoIncrement())
          .addColumn('username', 'text', (col) => col.notNull().unique())
          .addColumn('password_hash', 'text', (col) => col.notNull())
          .addColumn('name', 'text', (col) => col.notNull())
          .addColumn('birthdate', 'text', (col) => col.notNull())
          .addColumn('gender', 'text', (col) => col.notNull())
          .addColumn('short_desc', 'text', (col) => col.notNull().defaultTo(''))
          .addColumn('token_version', 'integer', (col) => col.notNull().defaultTo(0))
          .addColumn('last_seen_at', 'bigint')
          .addColumn('created_at', 'bigint', (col) => col.notNull())
          .execute()
      },
      async down (db: Kysely<any>) {
        await db.schema.dropTable('users').execute()
      }
    }
  }
}

class InlineMigrations implements MigrationProvider {
  constructor (private readonly dialect: Dialect) {}
  async getMigrations (): Promise<Record<string, Migration>> {
    return migrationsFor(this.dialect)
  }
}

/**
 * Safe when several processes start at once on one PostgreSQL database (replicas, `meridian
 * migrate`): Kysely's Postgres adapter runs the pending migrations in one transaction under a
 * session advisory lock, re-reading what was applied once it holds the lock, and it tolerates
 * another process creating its bookkeeping tables first. test/cluster/concurrent-migrate.test.ts
 * holds any Kysely upgrade to that.
 */
export async function migrateToLatest (db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new InlineMigrations(dialect) })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

export async function ping (db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db)
}
