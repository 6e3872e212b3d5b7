import { spawnSync } from 'node:child_process'
import t from 'tap'
import { inRepository } from './repository.js'
import { switchSkip } from './requirements.js'

const script = inRepository('scripts', 'image-smoke.sh')
const skip = switchSkip('MERIDIAN_IMAGE_TEST', 'the container image check (a clean production install, about two minutes)')

t.test('the Dockerfile\'s build and start, done without Docker', { skip, timeout: 900_000 }, async (t) => {
  const result = spawnSync('bash', [script], { encoding: 'utf8', timeout: 900_000 })
  // The script's own error lines come first: tap may cut a long diagnostic from the end.
  t.equal(result.status, 0, `${result.stderr.slice(-3000)}\n--- stdout ---\n${result.stdout.slice(-1500)}`, { signal: result.signal })
  t.match(result.stdout, 'image smoke test passed')
})
