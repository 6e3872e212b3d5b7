import { readFileSync } from 'node:fs'

const SAMPLE_EVERY_MS = 5

/**
 * Milliseconds this thread has been ready to run but waiting for a CPU (Linux's schedstat, the
 * second field), or 0 where the system does not say.
 */
function waitedForCpuMs (): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1] ?? 0) / 1e6
  } catch {
    return 0
  }
}

export interface EventLoopStalls {
  /** The longest time the event loop did not turn, less the time the thread waited for a CPU. */
  longestMs: number
  /** The same, as the clock saw it. */
  longestOnTheClockMs: number
}

/**
 * Watches the event loop, from a timer every few ms, until `stop()`. On a machine shared with
 * other processes (parallel test files, other jobs) the thread also waits for a CPU, for tens of
 * ms at times: that wait is not the code's doing and is taken out where the system reports it.
 */
export function watchEventLoopStalls (): { stop: () => EventLoopStalls } {
  const stalls: EventLoopStalls = { longestMs: 0, longestOnTheClockMs: 0 }
  let lastTurn = performance.now()
  let lastCpuWait = waitedForCpuMs()
  const timer = setInterval(() => {
    const now = performance.now()
    const cpuWait = waitedForCpuMs()
    const onTheClock = now - lastTurn - SAMPLE_EVERY_MS
    stalls.longestOnTheClockMs = Math.max(stalls.longestOnTheClockMs, onTheClock)
    stalls.longestMs = Math.max(stalls.longestMs, onTheClock - (cpuWait - lastCpuWait))
    lastTurn = now
    lastCpuWait = cpuWait
  }, SAMPLE_EVERY_MS)
  return { stop: () => { clearInterval(timer); return stalls } }
}
