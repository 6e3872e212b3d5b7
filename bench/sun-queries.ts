import type { BenchRequest } from './harness.js'

/** A small seeded generator, so that every run sends the same queries. */
function mulberry32 (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let mixed = Math.imul(state ^ (state >>> 15), state | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296
  }
}

/** 4,000 random sun queries (latitude ±65°, any longitude, 1950–2100): repeats and new ones alike. */
export function sunQueries (): BenchRequest[] {
  const random = mulberry32(20240620)
  const first = Date.UTC(1950, 0, 1) / 1000
  const last = Date.UTC(2100, 11, 31) / 1000
  return Array.from({ length: 4000 }, () => ({
    method: 'GET',
    path: `/api/date/suninfo?timestamp=${Math.floor(first + random() * (last - first))}` +
      `&latitude=${((random() * 2 - 1) * 65).toFixed(4)}&longitude=${((random() * 2 - 1) * 180).toFixed(4)}`
  }))
}
