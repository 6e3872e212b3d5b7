import { sql, type Kysely } from 'kysely'
import type { Dialect } from './connect.js'
import { retryWhileBusy } from './retry-while-busy.js'
import type { Database } from './schema.js'

export interface BatchedTime {
  table: 'users' | 'sessions'
  column: 'last_seen_at' | 'last_used_at'
  /** The SQL type of the table's `id`, for PostgreSQL's array of ids. */
  keyType: 'bigint' | 'text'
}

/** Raises `column` of many rows (id → UNIX ms) in one statement; never back, so a slower replica changes nothing. */
export async function raiseTimes<K extends number | string> (
  db: Kysely<Database>, dialect: Dialect, target: BatchedTime, seen: ReadonlyMap<K, number>
): Promise<void> {
  if (seen.size === 0) return
  // In id order, so that two replicas writing the same rows lock them in the same order.
  const entries = [...seen].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  const table = sql.table(target.table)
  const column = sql.ref(target.column)
  const current = sql.ref(`${target.table}.${target.column}`)
  const id = sql.ref(`${target.table}.id`)
  const query = dialect === 'postgres'
    ? sql`update ${table} set ${column} = greatest(${current}, seen.at)
        from unnest(${entries.map(([key]) => key)}::${sql.raw(target.keyType)}[],
          ${entries.map(([, at]) => at)}::bigint[]) as seen(id, at)
        where ${id} = seen.id`
    : sql`update ${table} set ${column} = max(coalesce(${current}, 0), seen.at)
        from (select value ->> 0 as id, value ->> 1 as at from json_each(${JSON.stringify(entries)})) as seen
        where ${id} = seen.id`
  await retryWhileBusy(async () => await query.execute(db))
}
