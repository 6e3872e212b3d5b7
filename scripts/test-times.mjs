#!/usr/bin/env node
// Prints the slowest test processes (a file, or a folder whose files share one) and subtests of a
// tap run, from its TAP output (a file, or standard input):
// `npm test 2>&1 | tee tap.log; node scripts/test-times.mjs tap.log`.
// .ci/run prints it after every suite, so that the next slow test is seen the day it lands. Last come
// the failed points with their path and tap's account of each: CI may keep only the end of its output.
import { readFileSync } from 'node:fs'

const SHOWN = 10
const text = readFileSync(process.argv[2] ?? 0, 'utf8')

// "ok 12 - .test-build/processes/1-waiting/test/cli/commands.test.js # time=20260.525ms" at the top level,
// the process's own subtests one level (four spaces) in; "# SKIP" lines carry no time.
const point = /^( *)(?:not )?ok \d+ - (.*?) # time=([\d.]+)ms/
// npm test runs the compiled tests, a process for each file of .test-build/processes/: name them
// by their sources, a file (test/cli/commands.test.ts) or a folder whose files share a process.
const source = (name) => name
  .replace(/^\.test-build\/processes\/\d-shared\/(.*?)-(\d+)\.test\.js$/, 'test/$1/ (part $2 of its files, in one process)')
  .replace(/^\.test-build\/processes\/\d-shared\/(.*)\.test\.js$/, 'test/$1/ (its files in one process)')
  .replace(/^\.test-build\/processes\/\d-under-load\/.*$/, 'the files under load (one after the other, in one process)')
  .replace(/^\.test-build\/(?:processes\/\d-\w+\/)?(.*)\.js$/, '$1.ts')
// A failed point's diagnosis is the YAML block right under it, two spaces further in ("---" to "...").
const failedPoint = /^( *)not ok \d+ - (.*?)(?: # time=[\d.]+ms)?$/
const subtest = /^( *)# Subtest: (.*)$/
const files = []
const subtests = []
const failures = []
// The subtests the current line is in, the test process first: a level is four spaces.
const path = []
let failedOnLineBefore = null
let diagnosis = null
for (const line of text.split('\n')) {
  if (diagnosis !== null) {
    diagnosis.lines.push(line.slice(diagnosis.indent))
    if (line.trim() === '...' || diagnosis.lines.length > 40) diagnosis = null
    continue
  }
  if (failedOnLineBefore !== null && line.trim() === '---') {
    diagnosis = failedOnLineBefore
    diagnosis.lines.push('---')
    failedOnLineBefore = null
    continue
  }
  failedOnLineBefore = null
  const opened = subtest.exec(line)
  if (opened !== null) path.splice(opened[1].length / 4, Infinity, opened[2])
  const failed = failedPoint.exec(line)
  if (failed !== null) {
    const where = path.slice(0, failed[1].length / 4).map(source)
    failedOnLineBefore = { name: [...where, source(failed[2])].join(' > '), indent: failed[1].length + 2, lines: [] }
    failures.push(failedOnLineBefore)
  }
  const match = point.exec(line)
  if (match === null) continue
  const [, indent, name, ms] = match
  if (indent === '') files.push({ name: source(name), seconds: Number(ms) / 1000 })
  else if (indent === '    ') subtests.push({ name: `${source(path[0] ?? '?')} > ${name}`, seconds: Number(ms) / 1000 })
}

const table = (title, rows) => {
  console.log(`\n${title}`)
  for (const { name, seconds } of rows.sort((a, b) => b.seconds - a.seconds).slice(0, SHOWN)) {
    console.log(`${seconds.toFixed(1).padStart(7)} s  ${name}`)
  }
}
const total = files.reduce((sum, { seconds }) => sum + seconds, 0)
table(`The ${SHOWN} slowest of ${files.length} test processes (${total.toFixed(0)} s in all; tap runs several at a time):`, files)
table(`The ${SHOWN} slowest subtests:`, subtests)

if (failures.length > 0) {
  console.log(`\nFailed (${failures.length}, each with the subtests it is in):`)
  for (const { name, lines } of failures) {
    console.log(`not ok - ${name}`)
    for (const line of lines) console.log(`    ${line}`)
  }
}
