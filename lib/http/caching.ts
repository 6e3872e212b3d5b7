/**
 * Whether an If-None-Match header names `etag` (RFC 9110 §13.1.2): `*`, or a comma-separated
 * list compared weakly (a `W/` prefix on either side is ignored).
 */
export function matchesIfNoneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  const wanted = opaque(etag)
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted)
}
