#!/usr/bin/env node
// `tap build` (npm ci's `prepare`) links .tap/plugins/node_modules/@tapjs/core to this checkout's by absolute path.
// A copied or moved checkout would then load the old place's tap core beside its own, and tap fails with "weird
// thing got in the queue". Linked relatively, the link moves with the checkout. `npm test` runs this first (not `prepare`: the
// image's build runs that without scripts/).
import { existsSync, lstatSync, readlinkSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, relative } from 'node:path'

const link = '.tap/plugins/node_modules/@tapjs/core'
const core = 'node_modules/@tapjs/core'

if (!existsSync(dirname(link))) {
  console.error(`${link} is missing: run npx tap build`)
  process.exit(1)
}
const wanted = relative(dirname(link), core)
const target = lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true ? readlinkSync(link) : undefined
if (target !== wanted) {
  rmSync(link, { force: true, recursive: true })
  symlinkSync(wanted, link)
}
