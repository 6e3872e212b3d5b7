/** highlight.js's grammars are quadratic in a run of word characters: the bounds below count size, not time. */
import hljs from 'highlight.js/lib/common'

/** Longest run of word characters (letters, digits, `_`, `$`) a highlighted block may hold. */
export const MAX_WORD_RUN = 128
export const MAX_HIGHLIGHTED_BLOCK = 65_536
/** Each block counts at least BLOCK_FLOOR_CHARACTERS (docs/performance.md, "Highlighted code and math"). */
export const HIGHLIGHTED_PER_DOCUMENT = 1_572_864
export const BLOCK_FLOOR_CHARACTERS = 1024

const PLAIN_TEXT = hljs.getLanguage('plaintext')
/** Names GitHub reads otherwise than highlight.js: `shell` is Bash there (Linguist), a shell session here. */
const AS_GITHUB_READS: Readonly<Record<string, string>> = { shell: 'bash', 'shell-script': 'bash' }
const asGithubReads = (language: string): string => AS_GITHUB_READS[language.toLowerCase()] ?? language

interface HighlightEnv { highlightedCharacters?: number }

const isWordCharacter = (code: number): boolean =>
  (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) ||
  code === 0x5f || code === 0x24

function holdsLongWordRun (code: string): boolean {
  let run = 0
  for (let index = 0; index < code.length; index++) {
    run = isWordCharacter(code.charCodeAt(index)) ? run + 1 : 0
    if (run > MAX_WORD_RUN) return true
  }
  return false
}

export function isHighlighted (language: string): boolean {
  const found = language === '' ? undefined : hljs.getLanguage(asGithubReads(language))
  return found !== undefined && found !== PLAIN_TEXT
}

/** The block's HTML with token spans, or undefined when it stays plain (see above). */
export function highlightCode (code: string, language: string, env: object): string | undefined {
  if (!isHighlighted(language) || code.length > MAX_HIGHLIGHTED_BLOCK || holdsLongWordRun(code)) return undefined
  const spent = env as HighlightEnv
  if ((spent.highlightedCharacters ?? 0) + BLOCK_FLOOR_CHARACTERS > HIGHLIGHTED_PER_DOCUMENT) return undefined
  const html = hljs.highlight(code, { language: asGithubReads(language), ignoreIllegals: true }).value
  const counted = (spent.highlightedCharacters ?? 0) + Math.max(html.length, BLOCK_FLOOR_CHARACTERS)
  // Past the budget, the budget is spent: no later block runs highlight.js only to be dropped.
  spent.highlightedCharacters = Math.min(counted, HIGHLIGHTED_PER_DOCUMENT)
  return counted > HIGHLIGHTED_PER_DOCUMENT ? undefined : html
}
