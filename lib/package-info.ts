import { readFileSync } from 'node:fs'

/** package.json sits beside the sources and one level above the build output. */
function readPackageJson (): { name: string, version: string } {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      return JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { name: string, version: string }
    } catch {}
  }
  throw new Error('package.json not found beside the sources')
}

export const packageInfo = readPackageJson()
