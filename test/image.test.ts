import { spawnSync } from 'node:child_process'
import t from 'tap'
import { inRepository } from './support/repository.js'
import { switchSkip } from './support/requirements.js'

const script = inRepository('scripts', 'image-smoke.sh')
const skip = switchSkip('MERIDIAN_IMAGE_TEST', 'the container image check (a clean production install, about two minutes)')

t.test('the Dockerfile\'s build and start, done without Docker', { skip, timeout: 900_000 }, async (t) => {
  // Niced: its two installs (one compiles better-sqlite3) are throughput work, and CI runs the
  // cluster tests beside it, whose replicas answer 503 past an event-loop delay of 1 s.
  const result = spawnSync('nice', ['-n', '10', 'bash', script], { encoding: 'utf8', timeout: 900_000 })
  // The script's own error lines come first: tap may cut a long diagnostic from the end.
  t.equal(result.status, 0, `${result.stderr.slice(-3000)}\n--- stdout ---\n${result.stdout.slice(-1500)}`, { signal: result.signal })
  t.match(result.stdout, 'image smoke test passed')
})
