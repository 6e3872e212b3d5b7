#!/usr/bin/env node
// Compiles the tests and the sources they import to JavaScript in .test-build/, mirroring the
// checkout (.test-build/test/support/helper.js imports .test-build/app.js), so that each test process
// starts without a TypeScript loader: on Node 20 tsx's module hooks cost every test file about
// 0.45 s of CPU before its first test, more when it loads the app (docs/performance.md, "The
// test suite"). esbuild is the transpiler tsx itself runs, so the code is what tsx would run;
// types are checked by `npm run check`, not here. `npm test` runs it before tap (pretest).
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
 * The folders of test/ whose test files share one process each, run one after the other, rather
 * than a process each. They test the app and lib/ in process (`app.inject`, the units of lib/),
 * and none waits long on a process it starts. tap starts a process for every file it runs, and
 * each pays for itself before its first test: tap and the app (over 700 ES modules in all), each
 * module passed through the module hooks of tap's processinfo (on a thread of their own on
 * Node 20). That is about 1.8 s of CPU for a file that loads the app, often more than its tests
 * take (docs/performance.md, "The test suite"). The other files, which start processes or wait
 * on them, keep a process each and run beside these.
 */
const SHARED_PROCESSES = ['test/clients', 'test/lib', 'test/plugins', 'test/routes']
/**
 * Files that load the machine (a flood, hundreds of requests a second through killed and restarted
 * replicas) and assert that no request fails or that latency stays bounded: one after the other in
 * one process, so that no two of them share the two cores; started last, so that the in-process
 * folders' own timing checks (test/plugins/database-busy.test.ts) do not run beside a flood. Side by side, a replica
 * of one starved past under-pressure's 1 s event-loop bound and answered 503 (CI, stop 51).
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
/** Their sum is about 8 minutes on CI, past tap's 10-minute bound per process with little room. */
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
  writeProcess(join(processes, '2-shared', `${basename(folder)}.test.js`), files, `Every test file of ${folder}/, in one process (scripts/build-tests.mjs).`)
}
for (const file of testFiles.filter((file) => !inFolder(file, SHARED_PROCESSES) && !UNDER_LOAD.includes(file))) {
  writeProcess(join(processes, inFolder(file, WAITING) ? '1-waiting' : '3-others', file.replace(/\.ts$/, '.js')), [file])
}
