/** Query or form fields whose values must never reach a log line. */
const SECRET_FIELDS = /^(access_token|refresh_token|token|password|jwt_secret)$/i

/** The URL with the value of every secret query parameter replaced by `[REDACTED]`. */
export function redactUrl (url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const redacted = url.slice(queryStart + 1).split('&').map((pair) => {
    const separator = pair.indexOf('=')
    const rawName = separator === -1 ? pair : pair.slice(0, separator)
    let name: string
    try {
      name = decodeURIComponent(rawName.replaceAll('+', ' '))
    } catch {
      name = rawName
    }
    return SECRET_FIELDS.test(name) ? `${rawName}=[REDACTED]` : pair
  })
  return `${url.slice(0, queryStart)}?${redacted.join('&')}`
}
