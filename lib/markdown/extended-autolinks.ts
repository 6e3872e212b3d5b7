/** Extended autolinks after cmark-gfm: each scan moves forward, so text is read a bounded number of times. */
import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'

const isAlpha = (code: number): boolean => (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a)
const isAlnum = (code: number): boolean => isAlpha(code) || (code >= 0x30 && code <= 0x39)
const isSpace = (code: number): boolean => code === 0x20 || (code >= 0x09 && code <= 0x0d)
const isHostChar = (code: number): boolean => isAlnum(code) || code === 0x2d || code === 0x5f || code >= 0x80
const BEFORE_WWW = new Set(Array.from('*_~(', (character) => character.charCodeAt(0)))
const TRAILING_PUNCTUATION = new Set(Array.from('?!.,:*_~\'"', (character) => character.charCodeAt(0)))
const EMAIL_LOCAL_PUNCTUATION = new Set(Array.from('.+-_', (character) => character.charCodeAt(0)))
const URL_SCHEMES = ['http', 'https', 'ftp']

interface Domain { end: number, valid: boolean }

/** Valid with a period (`www.` counts) and no underscore in its last two segments. */
function scanDomain (text: string, start: number, needsPeriod: boolean): Domain {
  let periods = 0
  let underscoresLast = 0
  let underscoresBefore = 0
  let end = start
  for (; end < text.length; end++) {
    const code = text.charCodeAt(end)
    if (code === 0x2e) {
      periods++
      underscoresBefore = underscoresLast
      underscoresLast = 0
    } else if (code === 0x5f) {
      underscoresLast++
    } else if (!isHostChar(code)) break
  }
  return {
    end,
    valid: end > start && (!needsPeriod || periods > 0) && underscoresBefore === 0 && underscoresLast === 0
  }
}

/** Stops at `<`; drops trailing punctuation, an unmatched `)` and an entity-like `&name;`. */
function trimLinkEnd (text: string, start: number, end: number): number {
  // Only within the link: searching to the end of the text would make many links quadratic.
  for (let index = start; index < end; index++) {
    if (text.charCodeAt(index) === 0x3c) { end = index; break }
  }
  let opening = 0
  let closing = 0
  for (let index = start; index < end; index++) {
    if (text.charCodeAt(index) === 0x28) opening++
    else if (text.charCodeAt(index) === 0x29) closing++
  }
  while (end > start) {
    const last = text.charCodeAt(end - 1)
    if (TRAILING_PUNCTUATION.has(last)) {
      end--
    } else if (last === 0x3b) {
      let nameStart = end - 1
      while (nameStart > start && isAlnum(text.charCodeAt(nameStart - 1))) nameStart--
      end = nameStart < end - 1 && nameStart > start && text.charCodeAt(nameStart - 1) === 0x26
        ? nameStart - 1
        : end - 1
    } else if (last === 0x29 && closing > opening) {
      closing--
      end--
    } else break
  }
  return end
}

const pathEnd = (text: string, from: number): number => {
  let end = from
  while (end < text.length && !isSpace(text.charCodeAt(end)) && text.charCodeAt(end) !== 0x3c) end++
  return end
}

interface Found { start: number, end: number, href: string }

function findAutolink (text: string, from: number): Found | null {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index)
    // Lower case only, as cmark-gfm compares it: `WWW.example.com` stays text.
    if (code === 0x77 && text.startsWith('www.', index)) {
      const before = text.charCodeAt(index - 1)
      if (index > 0 && !isSpace(before) && !BEFORE_WWW.has(before)) continue
      const domain = scanDomain(text, index, true)
      if (!domain.valid) { index = domain.end - 1; continue }
      const end = trimLinkEnd(text, index, pathEnd(text, domain.end))
      return { start: index, end, href: 'http://' + text.slice(index, end) }
    }
    if (code === 0x3a && text.startsWith('//', index + 1)) {
      let start = index
      while (start > from && isAlpha(text.charCodeAt(start - 1))) start--
      if (!URL_SCHEMES.includes(text.slice(start, index).toLowerCase())) continue
      const domain = scanDomain(text, index + 3, false)
      if (!domain.valid) { index = Math.max(index, domain.end - 1); continue }
      const end = trimLinkEnd(text, start, pathEnd(text, domain.end))
      return { start, end, href: text.slice(start, end) }
    }
    if (code === 0x40) {
      let start = index
      while (
        start > from &&
        (isAlnum(text.charCodeAt(start - 1)) || EMAIL_LOCAL_PUNCTUATION.has(text.charCodeAt(start - 1)))
      ) start--
      let end = index + 1
      let periods = 0
      let ats = 1
      for (; end < text.length; end++) {
        const next = text.charCodeAt(end)
        if (next === 0x40) ats++
        else if (next === 0x2e && isAlnum(text.charCodeAt(end + 1))) periods++
        else if (!isAlnum(next) && next !== 0x2d && next !== 0x5f) break
      }
      const last = text.charCodeAt(end - 1)
      if (start === index || ats > 1 || periods === 0 || !isAlpha(last)) { index = end - 1; continue }
      return { start, end, href: 'mailto:' + text.slice(start, end) }
    }
  }
  return null
}

function linkTokens (state: StateCore, text: string, found: Found): Token[] | null {
  const href = state.md.normalizeLink(found.href)
  if (!state.md.validateLink(href)) return null
  const open = new state.Token('link_open', 'a', 1)
  open.attrs = [['href', href]]
  open.markup = 'linkify'
  open.info = 'auto'
  const content = new state.Token('text', '', 0)
  content.content = state.md.normalizeLinkText(text.slice(found.start, found.end))
  const close = new state.Token('link_close', 'a', -1)
  close.markup = 'linkify'
  close.info = 'auto'
  return [open, content, close]
}

function splitText (state: StateCore, token: Token): Token[] | null {
  const text = token.content
  const pieces: Token[] = []
  let done = 0
  let from = 0
  for (let found = findAutolink(text, 0); found !== null; found = findAutolink(text, from)) {
    from = found.end > found.start ? found.end : found.start + 1
    const link = found.end > found.start ? linkTokens(state, text, found) : null
    if (link === null) continue
    if (found.start > done) {
      const before = new state.Token('text', '', 0)
      before.content = text.slice(done, found.start)
      pieces.push(before)
    }
    pieces.push(...link)
    done = found.end
  }
  if (pieces.length === 0) return null
  if (done < text.length) {
    const after = new state.Token('text', '', 0)
    after.content = text.slice(done)
    pieces.push(after)
  }
  return pieces
}

/** Native searches; escapes stay `text_special` until `text_join`, so a block whose source lacks these is skipped. */
const mayHoldAutolink = (text: string): boolean => text.includes('://') || text.includes('@') || text.includes('www.')

function linkExtendedAutolinks (state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || block.children === null || !mayHoldAutolink(block.content)) continue
    const children: Token[] = []
    let linkDepth = 0
    for (const token of block.children) {
      if (token.type === 'link_open') linkDepth++
      else if (token.type === 'link_close') linkDepth--
      const pieces = token.type === 'text' && linkDepth === 0 && mayHoldAutolink(token.content)
        ? splitText(state, token)
        : null
      if (pieces === null) children.push(token)
      else for (const piece of pieces) { piece.level = token.level; children.push(piece) }
    }
    block.children = children
  }
}

export function extendedAutolinks (md: MarkdownIt): void {
  // Before text_join: as in cmark-gfm, no link crosses an escaped character (`<foo\+@bar.example.com>`).
  md.core.ruler.after('inline', 'extended_autolinks', linkExtendedAutolinks)
}
