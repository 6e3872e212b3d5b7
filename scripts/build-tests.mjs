#!/usr/bin/env node
// Compiles the tests and the sources they import to JavaScript in .test-build/, mirroring the
// checkout (.test-build/test/helper.js imports .test-build/app.js), so that each test process
// starts without a TypeScript loader: on Node 20 tsx's module hooks cost every test file about
// 0.45 s of CPU before its first test, more when it loads the app (docs/performance.md, "The
// test suite"). esbuild is the transpiler tsx itself runs, so the code is what tsx would run;
// types are checked by `npm run check`, not here. `npm test` runs it before tap (pretest).
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
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
