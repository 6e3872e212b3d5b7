/** Whole years from a birthdate (YYYY-MM-DD) to `today` (UTC); `today` is taken apart once for many birthdates. */
export function agesOn (today: Date): (birthdate: string) => number {
  const year = today.getUTCFullYear()
  const monthDay = `${String(today.getUTCMonth() + 1).padStart(2, '0')}-${String(today.getUTCDate()).padStart(2, '0')}`
  return (birthdate) => year - Number(birthdate.slice(0, 4)) - (birthdate.slice(5) > monthDay ? 1 : 0)
}

/** Whether a user last seen at `lastSeenAt` (UNIX ms, 0 for never) is online at `nowMs`. */
export function isOnline (lastSeenAt: number, nowMs: number, windowSeconds: number): boolean {
  return lastSeenAt > 0 && nowMs - lastSeenAt <= windowSeconds * 1000
}

/** Zero-based offset and bounds of a 1-based page. */
export function pageWindow (page: number, perPage: number): { offset: number, limit: number } {
  return { offset: (page - 1) * perPage, limit: perPage }
}

export function totalPages (total: number, perPage: number): number {
  return Math.ceil(total / perPage)
}

/** The first, the last, and every page within `radius` of the current one, ascending: short for any number of users. */
export function linkedPages (current: number, lastPage: number, radius = 5): number[] {
  const pages = new Set<number>([1])
  if (lastPage >= 1) pages.add(lastPage)
  for (let page = Math.max(1, current - radius); page <= Math.min(lastPage, current + radius); page++) {
    pages.add(page)
  }
  return [...pages].sort((a, b) => a - b)
}
