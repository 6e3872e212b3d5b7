#!/usr/bin/env node
// Compiles the tests and the sources they import to JavaScript in .test-build/, mirroring the
// checkout, so that no test process starts with a TypeScript loader, whose module hooks cost each
// one CPU before its first test (docs/performance.md, "The test suite"). esbuild is what tsx runs,
// so the code is what tsx would run; `npm run check` checks the types. `npm test` runs it first.
//
// Then it lays out what tap runs, a file per test process, in .test-build/processes/: most test
// files in a process of their own, those of the folders in SHARED_PROCESSES together.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { build } from 'esbuild'

const outdir = '.test-build'
const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts')
// Every TypeScript file on disk, tracked or not yet: a new test runs before its first commit.
const sources = [
  ...readdirSync('.').filter(isSource),
  ...['lib', 'plugins', 'routes', 'schemas', 'scripts', 'test'].flatMap((directory) =>
    readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter(isSource).map((file) => join(directory, file)))
]

// A test deleted or renamed must not linger as JavaScript that tap still runs.
rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: sources,
  outdir,
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'inline',
  // As tsx transpiles: functions and classes keep their names.
  keepNames: true,
  logLevel: 'warning'
})

/**
 * The folders of test/ whose test files share one process each, one file after the other: they test
 * the app and lib/ in process, and a process of its own would cost each file more than its tests
 * (docs/performance.md, "The test suite"). Files that start processes or wait on them keep one each.
 */
const SHARED_PROCESSES = ['test/clients', 'test/lib', 'test/plugins', 'test/routes']
/**
 * A folder of more files is split, in path order, into processes of about equal counts: one process of the 19 files
 * of test/plugins/ ran 82 s while the rest of the suite had finished, the longest chain of the run.
 */
const MAX_FILES_A_SHARED_PROCESS = 10
/**
 * Files that load the machine and assert that no request fails or that latency stays bounded: one
 * after the other in one process, started last, so that no two share the cores and no timing check
 * of the in-process folders runs beside a flood (side by side, a starved replica answered 503).
 */
const UNDER_LOAD = [
  'test/cluster/fair-share.test.ts',
  'test/cluster/hard-faults-stock-nginx.test.ts',
  'test/cluster/hard-faults.test.ts',
  'test/cluster/postgres-restart.test.ts',
  'test/cluster/rolling-restart-stock-nginx.test.ts',
  'test/cluster/rolling-restart.test.ts',
  'test/fair-share-flood.test.ts'
]
/** Their sum is close to tap's bound for one process (docs/performance.md, "The figures behind the code's constants"). */
const UNDER_LOAD_TIMEOUT_MS = 25 * 60_000
/** Folders whose files mostly wait on what they start (Chromium, the CLI): started first, their waits overlap the rest. */
const WAITING = ['test/browser', 'test/cli']

// What tap runs: a file per process in .test-build/processes/, each importing the compiled test
// files it runs. tap starts them in the order of their paths: 1-waiting/, 2-shared/, 3-others/, 4-under-load/.
const processes = join(outdir, 'processes')
const testFiles = sources.filter((file) => file.startsWith('test/') && file.endsWith('.test.ts')).sort()
const inFolder = (file, folders) => folders.some((folder) => file.startsWith(folder + '/'))
const writeProcess = (entry, files, comment, preamble = '') => {
  const imports = files.map((file) => `import ${JSON.stringify('./' + relative(dirname(entry), join(outdir, file.replace(/\.ts$/, '.js'))))}\n`)
  mkdirSync(dirname(entry), { recursive: true })
  writeFileSync(entry, (comment === undefined ? '' : `// ${comment}\n`) + preamble + imports.join(''))
}
const missing = UNDER_LOAD.filter((file) => !testFiles.includes(file))
if (missing.length > 0) throw new Error(`UNDER_LOAD names test files that are not there: ${missing.join(', ')}`)
writeProcess(join(processes, '4-under-load', 'under-load.test.js'), UNDER_LOAD,
  'The test files that load the machine, one after the other (scripts/build-tests.mjs, UNDER_LOAD).',
  `import t from 'tap'\nt.setTimeout(${UNDER_LOAD_TIMEOUT_MS})\n`)
for (const folder of SHARED_PROCESSES) {
  const files = testFiles.filter((file) => inFolder(file, [folder]))
  const parts = Math.ceil(files.length / MAX_FILES_A_SHARED_PROCESS)
  for (let part = 0; part < parts; part++) {
    const share = files.slice(Math.floor(part * files.length / parts), Math.floor((part + 1) * files.length / parts))
    const name = parts === 1 ? basename(folder) : `${basename(folder)}-${part + 1}`
    writeProcess(join(processes, '2-shared', `${name}.test.js`), share, `Test files of ${folder}/, in one process (scripts/build-tests.mjs).`)
  }
}
for (const file of testFiles.filter((file) => !inFolder(file, SHARED_PROCESSES) && !UNDER_LOAD.includes(file))) {
  writeProcess(join(processes, inFolder(file, WAITING) ? '1-waiting' : '3-others', file.replace(/\.ts$/, '.js')), [file])
}
