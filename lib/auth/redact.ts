/** Query or form fields whose values must never reach a log line. */
const SECRET_FIELDS = /^(access_token|refresh_token|token|password|jwt_secret)$/i

/** A secret field written into a parameter's name by a client that encoded its `=` (`access_token%3D…`). */
const SECRET_FIELD_WITH_VALUE = /^(access_token|refresh_token|token|password|jwt_secret)=/i

/** A secret field as a path parameter (`;access_token=…`, `;` or `=` encoded or not), up to a `;`, `/` or `?`. */
const SECRET_PATH_PARAMETER = /(?:;|%3[bB])(access_token|refresh_token|token|password|jwt_secret)(?:=|%3[dD])[^;/?]*/gi

/** A JWT, dots written or percent-encoded; starting only where a base64url run starts keeps the work linear. */
const TOKEN_SHAPED = /(?<![\w-])eyJ[\w-]{8,}(?:\.|%(?:25)*2[eE])[\w-]*(?:(?:\.|%(?:25)*2[eE])[\w-]*)?/g

export const REDACTED = '[REDACTED]'

/** How often an escape may have been encoded again (`%2565` is `%65` is `e`): past that, a part is left as it is. */
const MAX_DECODINGS = 3

/** `part` percent-decoded until nothing changes (at most MAX_DECODINGS times); as far as it decodes when malformed. */
function fullyDecoded (part: string): string {
  let decoded = part
  for (let round = 0; round < MAX_DECODINGS && decoded.includes('%'); round++) {
    try {
      const next = decodeURIComponent(decoded)
      if (next === decoded) break
      decoded = next
    } catch {
      break
    }
  }
  return decoded
}

/** A part of a URL holding a token once decoded, whatever of it a client percent-encoded (`%65%79%4A…`). */
function holdsEncodedToken (part: string): boolean {
  // search(), not test(): it ignores the global pattern's lastIndex.
  return part.includes('%') && fullyDecoded(part).search(TOKEN_SHAPED) !== -1
}

function decodedName (rawName: string): string {
  try {
    return decodeURIComponent(rawName.replaceAll('+', ' '))
  } catch {
    return rawName
  }
}

function redactQuery (query: string): string {
  return query.split('&').map((pair) => {
    const separator = pair.indexOf('=')
    const rawName = separator === -1 ? pair : pair.slice(0, separator)
    if (holdsEncodedToken(rawName)) return separator === -1 ? REDACTED : `${REDACTED}=${REDACTED}`
    const name = decodedName(rawName)
    const value = separator === -1 ? '' : pair.slice(separator + 1)
    if (SECRET_FIELDS.test(name) || holdsEncodedToken(value)) return `${rawName}=${REDACTED}`
    const written = SECRET_FIELD_WITH_VALUE.exec(name)
    return written === null ? pair : `${written[1]!}%3D${REDACTED}`
  }).join('&')
}

/** Secret parameters' values, anything token-shaped, and any part that decodes to one, as `[REDACTED]`. */
export function redactUrl (url: string): string {
  const queryStart = url.indexOf('?')
  const path = queryStart === -1 ? url : url.slice(0, queryStart)
  const withoutSecretParameters = path.replace(SECRET_PATH_PARAMETER, (_, name: string) => `;${name}=${REDACTED}`)
  const redactedPath = withoutSecretParameters.includes('%')
    ? withoutSecretParameters.split('/').map((segment) => holdsEncodedToken(segment) ? REDACTED : segment).join('/')
    : withoutSecretParameters
  const redacted = queryStart === -1 ? redactedPath : `${redactedPath}?${redactQuery(url.slice(queryStart + 1))}`
  return redacted.replace(TOKEN_SHAPED, REDACTED)
}
