/**
 * A PostgreSQL server of a test's own: `initdb` in a temporary directory, listening on one
 * loopback address and a free port, run as the `postgres` user (PostgreSQL refuses to run as
 * root), stopped and removed when the test ends. For tests that restart the database for real.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { skipIfMissing } from '../support/requirements.js'
import { freePort } from './harness.js'

const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'

/** Why a test that needs its own PostgreSQL server cannot run here, or false. */
export const postgresServerSkip: string | false = skipIfMissing(
  !existsSync(join(POSTGRES_BIN, 'initdb'))
    ? `no initdb in ${POSTGRES_BIN} (set POSTGRES_BIN)`
    : spawnSync('id', ['-u', 'postgres']).status !== 0 && 'no `postgres` user to run the server as')

export interface PostgresServer {
  /** `postgres://postgres@host:port/postgres`, trust authentication. */
  url: string
  /**
   * `pg_ctl stop -m fast` (every connection closed), `downMs` with no server, then `pg_ctl start`,
   * waiting until it accepts connections. Without the pause the server is away for about 0.1 s,
   * which probes on a busy machine can miss.
   */
  restart: (downMs: number) => Promise<void>
}

function asPostgres (command: string, args: string[]): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, command), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

export async function startPostgresServer (t: Test, host: string): Promise<PostgresServer> {
  const directory = mkdtempSync(join(tmpdir(), 'meridian-postgres-'))
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
  chownSync(directory, uid, gid)
  const data = join(directory, 'data')
  const port = await freePort(host)
  const pgCtl = (action: string, ...args: string[]) =>
    asPostgres('pg_ctl', [action, '-D', data, '-w', '-t', '30', '-l', join(directory, 'server.log'), ...args])
  t.teardown(() => {
    try {
      asPostgres('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w'])
    } catch {}
    rmSync(directory, { recursive: true, force: true })
  })
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions'])
  // The socket goes to the run's directory: /var/run/postgresql belongs to the machine's server.
  const options = `-c listen_addresses=${host} -p ${port} -k ${directory} -c fsync=off`
  pgCtl('start', '-o', options)
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    async restart (downMs) {
      const pgCtlAsync = async (...args: string[]) =>
        await promisify(execFile)('runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, 'pg_ctl'), ...args, '-D', data, '-w', '-t', '30', '-l', join(directory, 'server.log')])
      await pgCtlAsync('stop', '-m', 'fast')
      await sleep(downMs)
      await pgCtlAsync('start', '-o', options)
    }
  }
}
