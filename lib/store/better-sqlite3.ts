import { createRequire } from 'node:module'
import type BetterSqlite3Module from 'better-sqlite3'

/**
 * The one place that loads better-sqlite3 (two copies of SQLite in one process break each other's file locks), in the
 * copy that works on the running Node: 13.x from Node 22 (12.x built against Node 24.19+ aborts when the GC finalizes
 * a statement, nodejs/node#65446); 12.x on Node 20, where 13.x crashes on load. Drop 12.x when Node 20 leaves CI.
 */
const nodeMajor = Number(process.versions.node.split('.')[0])
const BetterSqlite3 = createRequire(import.meta.url)(
  nodeMajor >= 22 ? 'better-sqlite3-13' : 'better-sqlite3'
) as typeof BetterSqlite3Module
export default BetterSqlite3
