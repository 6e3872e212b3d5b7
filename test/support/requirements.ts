import { existsSync } from 'node:fs'
import t from 'tap'

/**
 * The `skip` option of a test that needs something a developer's machine may lack: the reason
 * when it is missing, false when it is there. Under `CI=true` a missing requirement fails the
 * run instead: CI must not pass without running what it advertises.
 */
export function skipIfMissing (missing: string | false): string | false {
  if (missing === false) return false
  if (process.env.CI === 'true') t.fail(`CI=true, but ${missing}`)
  return `skipped: ${missing}`
}

/**
 * The `skip` option of a group that runs when its switch is `1`. Unset under `CI=true`, it fails
 * the run; set to `0`, the group is off on purpose (`.ci/run` runs the cluster and image groups on
 * one Node version only) and is skipped, CI or not.
 */
export function switchSkip (name: string, what: string): string | false {
  const value = process.env[name]
  if (value === '1') return false
  if (value === '0') return `skipped: ${name}=0 switches off ${what}`
  return skipIfMissing(`${what} runs when ${name}=1, as .ci/run sets it`)
}

export const redisUrl = process.env.TEST_REDIS_URL

export function redisSkip (): string | false {
  return skipIfMissing(redisUrl === undefined && 'Redis missing: set TEST_REDIS_URL (e.g. redis://127.0.0.1:6379)')
}

export const CHROMIUM = '/usr/bin/chromium'

export function chromiumSkip (): string | false {
  return skipIfMissing(!existsSync(CHROMIUM) && `Chromium not installed at ${CHROMIUM}`)
}
