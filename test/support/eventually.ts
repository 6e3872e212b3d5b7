import { setTimeout as sleep } from 'node:timers/promises'

/** Polls `check` every `everyMs` until it holds or `limitMs` passes: whether it held. */
export async function eventually (check: () => boolean | Promise<boolean>, limitMs = 3000, everyMs = 5): Promise<boolean> {
  const started = performance.now()
  do {
    if (await check()) return true
    await sleep(everyMs)
  } while (performance.now() - started < limitMs)
  return false
}
