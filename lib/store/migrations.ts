import { DEFAULT_MIGRATION_TABLE, type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import { DatabaseSetupError, type Dialect } from './connect.js'

/** Applied in name order, recorded by Kysely in `kysely_migration`. Never edit one that has shipped: add the next. */
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
    },
    '0002_user_stats': dialect === 'postgres' ? userStatsOnPostgres : userStatsOnSqlite,
    '0003_user_counters': dialect === 'postgres' ? userCountersOnPostgres : userCountersOnSqlite,
    '0004_sessions': dialect === 'postgres' ? sessionsOnPostgres : sessionsOnSqlite,
    // SQLite has no notifications, and a replica reads its counters for the price of a function call.
    ...(dialect === 'postgres' ? { '0005_counters_notify': countersNotifyOnPostgres } : {})
  }
}

/** One row each user change bumps in its own transaction; replicas cache only while its versions hold. */
const createUserStats = async (db: Kysely<any>): Promise<void> => {
  await db.schema.createTable('user_stats').ifNotExists()
    .addColumn('id', 'integer', (col) => col.primaryKey().check(sql`id = 1`))
    .addColumn('user_count', 'bigint', (col) => col.notNull())
    .addColumn('members_version', 'bigint', (col) => col.notNull())
    .addColumn('credentials_version', 'bigint', (col) => col.notNull())
    .execute()
  await sql`insert into user_stats (id, user_count, members_version, credentials_version)
    select 1, count(*), 0, 0 from users where not exists (select 1 from user_stats)`.execute(db)
}

// Own transaction (Kysely runs SQLite migrations outside one): the write lock joins the count and the triggers, and a
// stopped run leaves nothing. Each step tolerates a run committed but not yet recorded by Kysely.
const userStatsOnSqlite: Migration = {
  async up (db: Kysely<any>) {
    await db.transaction().execute(async (trx) => {
      await createUserStats(trx)
      await sql`create trigger if not exists users_inserted after insert on users begin
        update user_stats set user_count = user_count + 1, members_version = members_version + 1; end`.execute(trx)
      await sql`create trigger if not exists users_deleted after delete on users begin
        update user_stats set user_count = user_count - 1, members_version = members_version + 1,
          credentials_version = credentials_version + 1; end`.execute(trx)
      await sql`create trigger if not exists users_revoked after update of token_version on users begin
        update user_stats set credentials_version = credentials_version + 1; end`.execute(trx)
    })
  }
}

// Statement-level triggers: a seed of thousands of rows updates the row once. The lock keeps other writers (old
// replicas in a rollout) from changing users between the count and the triggers.
const userStatsOnPostgres: Migration = {
  async up (db: Kysely<any>) {
    await sql`lock table users in share row exclusive mode`.execute(db)
    await createUserStats(db)
    /* eslint-disable @stylistic/max-len -- migration SQL as shipped: wrapping it would change the function bodies */
    await sql`create function users_inserted() returns trigger language plpgsql as $$ begin
      update user_stats set user_count = user_count + (select count(*) from inserted), members_version = members_version + 1;
      return null; end $$`.execute(db)
    await sql`create function users_deleted() returns trigger language plpgsql as $$ begin
      update user_stats set user_count = user_count - (select count(*) from deleted), members_version = members_version + 1,
        credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
    await sql`create function users_truncated() returns trigger language plpgsql as $$ begin
      update user_stats set user_count = 0, members_version = members_version + 1, credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
    /* eslint-enable @stylistic/max-len */
    await sql`create function users_revoked() returns trigger language plpgsql as $$ begin
      update user_stats set credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
    await sql`create trigger users_inserted after insert on users referencing new table as inserted
      for each statement execute function users_inserted()`.execute(db)
    await sql`create trigger users_deleted after delete on users referencing old table as deleted
      for each statement execute function users_deleted()`.execute(db)
    await sql`create trigger users_truncated after truncate on users
      for each statement execute function users_truncated()`.execute(db)
    await sql`create trigger users_revoked after update of token_version on users
      for each statement execute function users_revoked()`.execute(db)
  }
}

// 0003: user_stats becomes user_counters. The old-name view keeps running old replicas reading the counters in a
// rollout; one started afterwards refuses, not knowing 0003 (docs/operations.md, "Upgrade").
const keepOldName = sql`create view user_stats as select * from user_counters`

// SQLite rewrites the triggers' references itself. Own transaction; an unrecorded earlier run renamed the table.
const userCountersOnSqlite: Migration = {
  async up (db: Kysely<any>) {
    await db.transaction().execute(async (trx) => {
      const { rows } = await sql`select name from sqlite_master where type = 'table' and name = 'user_stats'`
        .execute(trx)
      if (rows.length === 0) return
      await sql`alter table user_stats rename to user_counters`.execute(trx)
      await keepOldName.execute(trx)
    })
  }
}

// PL/pgSQL functions name their table in text: each is replaced, in the migration's transaction.
const userCountersOnPostgres: Migration = {
  async up (db: Kysely<any>) {
    await sql`alter table user_stats rename to user_counters`.execute(db)
    await keepOldName.execute(db)
    /* eslint-disable @stylistic/max-len -- migration SQL as shipped: wrapping it would change the function bodies */
    await sql`create or replace function users_inserted() returns trigger language plpgsql as $$ begin
      update user_counters set user_count = user_count + (select count(*) from inserted), members_version = members_version + 1;
      return null; end $$`.execute(db)
    await sql`create or replace function users_deleted() returns trigger language plpgsql as $$ begin
      update user_counters set user_count = user_count - (select count(*) from deleted), members_version = members_version + 1,
        credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
    await sql`create or replace function users_truncated() returns trigger language plpgsql as $$ begin
      update user_counters set user_count = 0, members_version = members_version + 1, credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
    /* eslint-enable @stylistic/max-len */
    await sql`create or replace function users_revoked() returns trigger language plpgsql as $$ begin
      update user_counters set credentials_version = credentials_version + 1;
      return null; end $$`.execute(db)
  }
}

// 0004: a row per login. Ending one (ended_at, set once) moves sessions_version in the same transaction, so replicas
// cache open sessions only while it holds. A password change or removal ends open sessions by trigger, whoever makes
// it; expired ones are left to pruning, which moves no version (those sessions were already refused).
const createSessions = async (db: Kysely<any>): Promise<void> => {
  await db.schema.createTable('sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'bigint', (col) => col.notNull())
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('end_cause', 'text')
    .execute()
  // Partial: what each is for (a user's open sessions; pruning the ended, then the expired) reads only those rows.
  await sql`create index sessions_open_by_user on sessions (user_id) where ended_at is null`.execute(db)
  await sql`create index sessions_ended on sessions (ended_at) where ended_at is not null`.execute(db)
  await sql`create index sessions_open_by_expiry on sessions (expires_at) where ended_at is null`.execute(db)
  await sql`alter table user_counters add column sessions_version bigint not null default 0`.execute(db)
}

/** UNIX ms now, in SQLite's SQL (unixepoch('subsec') needs SQLite 3.42). */
const SQLITE_NOW_MS = sql.raw("cast((julianday('now') - 2440587.5) * 86400000 as integer)")

// Own transaction, as above; an unrecorded earlier run has created the table already.
const sessionsOnSqlite: Migration = {
  async up (db: Kysely<any>) {
    await db.transaction().execute(async (trx) => {
      const { rows } = await sql`select name from sqlite_master where type = 'table' and name = 'sessions'`.execute(trx)
      if (rows.length > 0) return
      await createSessions(trx)
      await sql`create trigger sessions_ended after update of ended_at on sessions
        when old.ended_at is null and new.ended_at is not null begin
        update user_counters set sessions_version = sessions_version + 1; end`.execute(trx)
      await sql`create trigger end_sessions_on_password_change after update of token_version on users begin
        update sessions set ended_at = ${SQLITE_NOW_MS}, end_cause = 'password'
        where user_id = new.id and ended_at is null and expires_at > ${SQLITE_NOW_MS}; end`.execute(trx)
      await sql`create trigger end_sessions_on_user_removal after delete on users begin
        update sessions set ended_at = ${SQLITE_NOW_MS}, end_cause = 'removal'
        where user_id = old.id and ended_at is null and expires_at > ${SQLITE_NOW_MS}; end`.execute(trx)
    })
  }
}

const POSTGRES_NOW_MS = sql.raw('(extract(epoch from now()) * 1000)::bigint')

// Row-level where a trigger needs the row (a column list rules out transition tables). PostgreSQL fires triggers by
// name, so end_sessions_* lock sessions rows before 0002's users_* lock user_counters: a logout's order, no deadlock.
const sessionsOnPostgres: Migration = {
  async up (db: Kysely<any>) {
    await createSessions(db)
    await sql`create function sessions_ended() returns trigger language plpgsql as $$ begin
      update user_counters set sessions_version = sessions_version + 1;
      return null; end $$`.execute(db)
    await sql`create trigger sessions_ended after update of ended_at on sessions for each row
      when (old.ended_at is null and new.ended_at is not null) execute function sessions_ended()`.execute(db)
    await sql`create function end_sessions_on_password_change() returns trigger language plpgsql as $$ begin
      update sessions set ended_at = ${POSTGRES_NOW_MS}, end_cause = 'password'
        where user_id = new.id and ended_at is null and expires_at > ${POSTGRES_NOW_MS};
      return null; end $$`.execute(db)
    await sql`create trigger end_sessions_on_password_change after update of token_version on users for each row
      when (old.token_version is distinct from new.token_version) execute function end_sessions_on_password_change()`
      .execute(db)
    await sql`create function end_sessions_on_user_removal() returns trigger language plpgsql as $$ begin
      update sessions set ended_at = ${POSTGRES_NOW_MS}, end_cause = 'removal'
        where user_id in (select id from deleted) and ended_at is null and expires_at > ${POSTGRES_NOW_MS};
      return null; end $$`.execute(db)
    await sql`create trigger end_sessions_on_user_removal after delete on users referencing old table as deleted
      for each statement execute function end_sessions_on_user_removal()`.execute(db)
    /* eslint-disable @stylistic/max-len -- migration SQL as shipped: wrapping it would change the function bodies */
    await sql`create function end_sessions_on_users_truncated() returns trigger language plpgsql as $$ begin
      update sessions set ended_at = ${POSTGRES_NOW_MS}, end_cause = 'removal' where ended_at is null and expires_at > ${POSTGRES_NOW_MS};
      return null; end $$`.execute(db)
    /* eslint-enable @stylistic/max-len */
    await sql`create trigger end_sessions_on_users_truncated after truncate on users
      for each statement execute function end_sessions_on_users_truncated()`.execute(db)
  }
}

/** The channel on which every change of user_counters is announced (0005), with the row as its payload. */
export const COUNTERS_CHANNEL = 'meridian_user_counters'

// 0005: a trigger, so every writer (any release, the CLI) announces the new row; PostgreSQL delivers it at commit, in
// commit order, to each replica's listener (counters-feed.ts).
const countersNotifyOnPostgres: Migration = {
  async up (db: Kysely<any>) {
    await sql`create function user_counters_changed() returns trigger language plpgsql as $$ begin
      perform pg_notify(${sql.lit(COUNTERS_CHANNEL)},
        concat_ws(' ', new.user_count, new.members_version, new.credentials_version, new.sessions_version));
      return null; end $$`.execute(db)
    await sql`create trigger user_counters_changed after update on user_counters for each row
      execute function user_counters_changed()`.execute(db)
  }
}

class InlineMigrations implements MigrationProvider {
  constructor (private readonly dialect: Dialect) {}
  async getMigrations (): Promise<Record<string, Migration>> {
    return migrationsFor(this.dialect)
  }
}

/** The migrations recorded in the database, in order; none before the first. */
async function recordedMigrations (db: Kysely<any>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === DEFAULT_MIGRATION_TABLE)) return []
  const rows = await db.selectFrom(DEFAULT_MIGRATION_TABLE).select('name').orderBy('name').execute()
  return rows.map((row: { name: string }) => row.name)
}

/** Refuses a schema migrated past this release (a rollback too far): it could lose or misread data. */
async function refuseNewerSchema (db: Kysely<any>, dialect: Dialect): Promise<void> {
  const known = Object.keys(migrationsFor(dialect)).sort()
  const unknown = (await recordedMigrations(db)).filter((name) => !known.includes(name))
  if (unknown.length === 0) return
  throw new DatabaseSetupError(`the database is at migration ${unknown.at(-1)!}, ` +
    `newer than this release knows (its latest is ${known.at(-1)!}): ` +
    'run the release that migrated it or a later one, or restore a backup taken before it ' +
    '(docs/operations.md, "Roll back")')
}

/**
 * Safe for concurrent starts on one PostgreSQL database: Kysely migrates in one transaction under an advisory lock,
 * re-reading what was applied. test/cluster/concurrent-migrate.test.ts holds any Kysely upgrade to that.
 */
export async function migrateToLatest (db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  await refuseNewerSchema(db, dialect)
  const migrator = new Migrator({ db, provider: new InlineMigrations(dialect) })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

export async function ping (db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db)
}
