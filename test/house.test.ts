import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repositoryRoot } from './support/repository.js'

const read = (path: string): string => readFileSync(join(repositoryRoot, path), 'utf8')

/** The lines of the command that starts with `CI=true \` and ends with `npm test`, each trimmed, what follows `npm test` left out. */
function testCommand (text: string, where: string): string[] {
  const lines = text.split('\n').map((line) => line.trim())
  const start = lines.indexOf('CI=true \\')
  const end = lines.findIndex((line, index) => index > start && line.startsWith('npm test'))
  if (start === -1 || end === -1) throw new Error(`${where} has no test command from "CI=true \\" to "npm test"`)
  return [...lines.slice(start, end), 'npm test']
}

t.test('.ci/run runs the README\'s test command, line for line (its output only is kept for the times)', async (t) => {
  const readme = testCommand(read('README.md'), 'README.md')
  t.same(testCommand(read('.ci/run'), '.ci/run'), readme)
  t.ok(readme.length >= 5, `with its ${readme.length - 2} variables`)
})

t.test('every eslint-disable directive says why', async (t) => {
  // Walked, not asked of git: CI runs a copy of the checkout without .git.
  const isCode = (file: string): boolean => /\.(?:ts|js|mjs|cjs)$/.test(file) && !file.includes('generated/')
  const files = [
    ...readdirSync(repositoryRoot).filter(isCode),
    ...['bench', 'lib', 'plugins', 'routes', 'schemas', 'scripts', 'test'].flatMap((folder) =>
      readdirSync(join(repositoryRoot, folder), { recursive: true, encoding: 'utf8' }).filter(isCode).map((file) => join(folder, file)))
  ]
  t.ok(files.length > 200, `${files.length} files read`)
  const unexplained = files.flatMap((file) => read(file).split('\n').flatMap((line, index) =>
    /^\s*(?:\/\/|\/\*)\s*eslint-disable/.test(line) && !/eslint-disable[\w-]*\s+[\w/@-]+(?:,\s*[\w/@-]+)*\s+--\s+\S/.test(line) ? [`${file}:${index + 1}`] : []))
  t.same(unexplained, [], 'each names its rules and, after --, its reason')
})
