import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import t from 'tap'
import { build } from './support/helper.js'
import { inRepository, repositoryRoot } from './support/repository.js'

const committedFile = inRepository('openapi.json')
const redocly = inRepository('node_modules', '.bin', 'redocly')

t.test('the committed openapi.json is the document the app generates', async (t) => {
  const app = await build(t)
  const generated = (await app.inject({ url: '/openapi.json' })).json()
  const committed = JSON.parse(readFileSync(committedFile, 'utf8'))
  t.same(committed, generated, 'openapi.json is out of date: run `npm run openapi` and review the difference')
})

t.test('redocly lint (recommended rules, redocly.yaml) finds no error and no warning', async (t) => {
  const { stdout } = await promisify(execFile)(redocly, ['lint', 'openapi.json', '--format=json'], {
    cwd: repositoryRoot,
    // Offline: no telemetry, no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
  const report = JSON.parse(stdout) as { totals: { errors: number, warnings: number }, problems: Array<{ ruleId: string, message: string }> }
  t.same(report.totals.errors, 0, 'errors')
  t.same(report.totals.warnings, 0, 'warnings')
  t.same(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`), [])
})

t.test('the sun answer types each pair of day as an enum of above, below and crosses', async (t) => {
  const app = await build(t)
  const served = (await app.inject({ url: '/openapi.json' })).json()
  const committed = JSON.parse(readFileSync(committedFile, 'utf8'))
  for (const [name, document] of [['served', served], ['committed', committed]] as const) {
    const sunInfo = document.components.schemas.SunInfo
    t.same(sunInfo.required, ['meta', 'data', 'day'], `${name}: day is required beside meta and data`)
    const day = sunInfo.properties.day
    t.same(Object.keys(day.properties), ['sunrise_sunset', 'civil_twilight', 'nautical_twilight', 'astronomical_twilight'], `${name}: the four pairs`)
    t.same(day.required, Object.keys(day.properties), `${name}: every pair is always there`)
    for (const [pair, schema] of Object.entries<{ type?: string, enum?: unknown[] }>(day.properties)) {
      t.equal(schema.type, 'string', `${name}: ${pair} is a string`)
      t.same(schema.enum, ['above', 'below', 'crosses'], `${name}: ${pair} is an enum of exactly these values`)
    }
  }
})
