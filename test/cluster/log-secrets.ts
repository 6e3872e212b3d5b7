import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'

/** A token, or the start of one: every token is a JWT, and base64url of '{"' is 'eyJ'. */
const TOKEN_SHAPED = /eyJ[A-Za-z0-9_-]{16,}/

/** `line` percent-decoded twice, as far as it decodes. */
function decoded (line: string): string {
  const once = (text: string): string => { try { return decodeURIComponent(text) } catch { return text } }
  return once(once(line))
}

/**
 * No log of the run holds a token: nginx's access and error logs as the shipped configuration
 * writes them, and every replica's output. The load sends access tokens in the query and refresh
 * tokens in bodies, so a log that quoted a request line or a body would show one.
 */
export function assertNoTokensInLogs (t: Test, directory: string): void {
  const logs = readdirSync(directory).filter((name) => name.endsWith('.log'))
  t.ok(logs.includes('error.log') && logs.includes('access-shipped.log'), `nginx's logs are among those read (${logs.join(', ')})`)
  for (const name of logs) {
    const lines = readFileSync(join(directory, name), 'utf8').split('\n')
    // Read as a reader would decode it too: a token percent-encoded whole is still a token (#59).
    const holding = lines.filter((line) => TOKEN_SHAPED.test(line) || TOKEN_SHAPED.test(decoded(line)))
    t.same(holding.slice(0, 3), [], `${name} (${lines.length - 1} lines) holds no token`)
  }
}
