import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The checkout's root: the nearest directory above this file with a package.json. The tests run
 * compiled in .test-build/ (`npm test`) or from their TypeScript (`npm run test:ts`), so a path
 * relative to a test file depends on how it was run; a path from here does not.
 */
function findRepositoryRoot (): string {
  for (let directory = dirname(fileURLToPath(import.meta.url)); ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory
    if (dirname(directory) === directory) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`)
  }
}

export const repositoryRoot = findRepositoryRoot()

/** A path inside the checkout, e.g. `inRepository('deploy', 'nginx.conf')`. */
export const inRepository = (...segments: string[]): string => join(repositoryRoot, ...segments)

/** The built `meridian` CLI (`npm run build`), which the tests that need a real process spawn. */
export const cliPath = inRepository('dist', 'cli.js')
