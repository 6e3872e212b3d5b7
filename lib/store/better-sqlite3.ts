import { createRequire } from 'node:module'
import type BetterSqlite3Module from 'better-sqlite3'

/**
 * The one place that loads better-sqlite3, in the copy that works on the running Node:
 * - Node 22 and later: 13.x (Node-API, prebuilt). 12.x built against Node 24.19 or later aborts
 *   the process when the garbage collector finalizes one of its statements (nodejs/node#65446).
 * - Node 20 (past its end of life, still the build machine's): 12.x; 13.x crashes on load there.
 * Drop 12.x, and this module, when Node 20 leaves CI. Every connection of a process comes from
 * here: two copies of SQLite in one process break each other's file locks.
 */
const nodeMajor = Number(process.versions.node.split('.')[0])
const BetterSqlite3 = createRequire(import.meta.url)(
  nodeMajor >= 22 ? 'better-sqlite3-13' : 'better-sqlite3'
) as typeof BetterSqlite3Module
export default BetterSqlite3
