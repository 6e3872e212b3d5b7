import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cliPath } from './repository.js'

/** What a `meridian` command did: its exit code (null if a signal ended it), its output, how long it took. */
export interface CliResult { code: number | null, stdout: string, stderr: string, ms: number }

export interface RunOptions {
  cwd?: string
  /** Milliseconds after which the command is killed (SIGTERM). */
  timeoutMs?: number
  /** Holds the command's process while it runs, for a test's clean-up. */
  children?: Set<ChildProcess>
}

/**
 * `node dist/cli.js …args` with exactly `env`, `input` on stdin. It never blocks this process,
 * whose event loop may be serving the app the command works on.
 */
export async function runMeridian (args: string[], env: Record<string, string>, input = '', options: RunOptions = {}): Promise<CliResult> {
  const started = performance.now()
  const child = spawn(process.execPath, [cliPath, ...args], { env, cwd: options.cwd, timeout: options.timeoutMs })
  options.children?.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdin.end(input)
  const [code] = await once(child, 'close') as [number | null]
  options.children?.delete(child)
  return { code, stdout, stderr, ms: performance.now() - started }
}
