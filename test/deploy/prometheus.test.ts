import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { parse } from 'yaml'
import { build } from '../support/helper.js'
import { inRepository } from '../support/repository.js'

const directory = inRepository('deploy', 'prometheus')
const PROMTOOL = process.env.PROMTOOL ?? 'promtool'
const run = promisify(execFile)

interface Rule { alert?: string, record?: string, expr: string }
interface AlertTest { alertname: string, exp_alerts?: unknown[] }
const rules = (parse(readFileSync(join(directory, 'alerts.yml'), 'utf8')) as { groups: Array<{ rules: Rule[] }> })
  .groups.flatMap((group) => group.rules)
const ruleTestFiles = ['alerts.test.yml', 'alerts-slow-burn.test.yml']
const alertTests = ruleTestFiles.flatMap((file) => (parse(readFileSync(join(directory, file), 'utf8')) as { tests: Array<{ alert_rule_test?: AlertTest[] }> })
  .tests.flatMap((test) => test.alert_rule_test ?? []))

async function promtoolVersion (): Promise<string | undefined> {
  try {
    return (await run(PROMTOOL, ['--version'])).stdout
  } catch {
    return undefined
  }
}
// Under CI a missing promtool fails the test; elsewhere it skips, saying how to get it.
const promtoolSkip = await promtoolVersion() !== undefined || process.env.CI === 'true'
  ? false
  : 'promtool not found (set PROMTOOL, or apt-get install prometheus): the rules are not checked'

t.test('promtool accepts the scrape configuration and the rules, and every rule unit test passes', { skip: promtoolSkip }, async (t) => {
  const options = { cwd: directory }
  t.match((await run(PROMTOOL, ['check', 'config', 'prometheus.yml'], options)).stdout, /SUCCESS/)
  t.match((await run(PROMTOOL, ['check', 'rules', 'alerts.yml'], options)).stdout, /SUCCESS/)
  // promtool exits non-zero, and `run` rejects with its report, when a test fails.
  t.match((await run(PROMTOOL, ['test', 'rules', ...ruleTestFiles], options)).stdout, /SUCCESS/)
})

t.test('every alert is unit-tested both firing and not firing', async (t) => {
  const alerts = rules.flatMap((rule) => rule.alert ?? [])
  t.ok(alerts.length >= 7)
  for (const alert of alerts) {
    const tests = alertTests.filter((test) => test.alertname === alert)
    t.ok(tests.some((test) => (test.exp_alerts ?? []).length > 0), `${alert} is tested firing`)
    t.ok(tests.some((test) => (test.exp_alerts ?? []).length === 0), `${alert} is tested not firing`)
  }
})

t.test('every metric the rules read is one the service exports, under that name', async (t) => {
  const app = await build(t)
  await app.inject({ url: '/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0' })
  const exported = new Set([...(await app.metricsRegistry.metrics()).matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)].map((match) => match[1]))
  const recorded = new Set(rules.flatMap((rule) => rule.record ?? []))
  const functionsAndOperators = new Set(['sum', 'rate', 'increase', 'histogram_quantile', 'and', 'or', 'on'])
  // What is left of an expression without its selectors, ranges and groupings: names.
  const read = new Set(rules.flatMap((rule) => [...rule.expr.replace(/\{[^}]*\}|\[[^\]]*\]|\bby\s*\([^)]*\)/g, ' ').matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((match) => match[0])))
  for (const name of read) {
    if (functionsAndOperators.has(name) || recorded.has(name) || name === 'up') continue
    t.ok(exported.has(name), `${name} is exported`)
  }
})
