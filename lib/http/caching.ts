/** Whether If-None-Match names `etag` (RFC 9110 §13.1.2): `*`, or a list compared weakly (`W/` ignored). */
export function matchesIfNoneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  const wanted = opaque(etag)
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted)
}
