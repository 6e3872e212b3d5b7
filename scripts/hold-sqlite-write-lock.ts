/**
 * Another process holding SQLite's write lock, as the CLI's `user seed` or a backup does:
 * `node --import tsx hold-sqlite-write-lock.ts <file> <ms | stdin>`: for `ms`, or until its standard input ends.
 * Prints `locked` once it holds the lock and `released` once it has committed.
 */
import BetterSqlite3 from '../lib/store/better-sqlite3.js'

const [file, hold] = process.argv.slice(2)
if (file === undefined || hold === undefined) throw new Error('usage: hold-sqlite-write-lock.ts <file> <ms | stdin>')
const database = new BetterSqlite3(file)
database.exec('BEGIN IMMEDIATE')
// One row: the lock is the point, and the benchmark's database has a million.
database.prepare("UPDATE users SET short_desc = short_desc || '' WHERE id = (SELECT min(id) FROM users)").run()
console.log('locked')
const release = (): void => {
  database.exec('COMMIT')
  database.close()
  console.log('released')
}
if (hold === 'stdin') process.stdin.on('end', release).resume()
else setTimeout(release, Number(hold))
