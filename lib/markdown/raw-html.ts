/** GFM's tagfilter, and a per-render random mark on own markup, the only markup the sanitizer trusts. */
import { randomBytes } from 'node:crypto'
import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'
import { FRAGMENT_ELEMENTS, OWN_MARK_ATTRIBUTE, sanitizeHtml } from './github-html.js'

/** GFM 0.29's tagfilter ("Disallowed Raw HTML"): their `<` becomes `&lt;`. */
const DISALLOWED_TAG = /<(\/?)(title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\t\n\f\r />]|$)/gi

const STARTS_WITH_DISALLOWED_TAG = new RegExp(`^${DISALLOWED_TAG.source}`, 'i')

/** A tag the tagfilter shows as text counts as text (in a heading's slug). */
export const isShownAsText = (tag: string): boolean => STARTS_WITH_DISALLOWED_TAG.test(tag)

interface OwnMarkEnv {
  ownMark?: string
  /** Each fragment once a render: a formula written many times is sanitized once. */
  safeFragments?: Map<string, string>
}

/** Set only for a document with raw HTML, whose whole render is then sanitized. */
export const ownMarkOf = (env: object): string | undefined => (env as OwnMarkEnv).ownMark

/** For renderers that write a tag as a string; `''` when the render is not sanitized whole. */
export function ownMarkAttribute (env: object): string {
  const mark = ownMarkOf(env)
  return mark === undefined ? '' : ` ${OWN_MARK_ATTRIBUTE}="${mark}"`
}

/** Own markup made safe: marked for sanitizing the whole render when it has raw HTML, else sanitized now. */
export function ownFragment (env: object, html: string): string {
  const own = env as OwnMarkEnv
  const { ownMark } = own
  if (ownMark !== undefined) {
    return html.replace(START_TAG, (tag, name: string) =>
      FRAGMENT_ELEMENTS.has(name) ? `${tag} ${OWN_MARK_ATTRIBUTE}="${ownMark}"` : tag)
  }
  own.safeFragments ??= new Map()
  let safe = own.safeFragments.get(html)
  if (safe === undefined) {
    safe = sanitizeHtml(html, 'fragment')
    own.safeFragments.set(html, safe)
  }
  return safe
}

const START_TAG = /<([a-z][a-z0-9]*)/g

function holdsRawHtml (tokens: readonly Token[]): boolean {
  for (const token of tokens) {
    if (token.type === 'html_block') return true
    if (token.type === 'inline' && token.children?.some((child) => child.type === 'html_inline') === true) return true
  }
  return false
}

function marksOwnAttributes (token: Token): boolean {
  switch (token.type) {
    case 'heading_open':
    case 'alert_open':
    case 'link_open':
    case 'image':
      return true
    case 'th_open':
    case 'td_open':
      return token.attrs !== null
    case 'fence':
      return token.info.trim() !== ''
    default:
      return false
  }
}

function mark (tokens: readonly Token[], value: string): void {
  for (const token of tokens) {
    // First: github-html.ts trusts a mark only as an element's first attribute.
    if (marksOwnAttributes(token)) token.attrs = [[OWN_MARK_ATTRIBUTE, value], ...(token.attrs ?? [])]
    if (token.children !== null) mark(token.children, value)
  }
}

function markOwnMarkup (state: StateCore): void {
  if (!holdsRawHtml(state.tokens)) return
  const value = randomBytes(12).toString('base64url')
  ;(state.env as OwnMarkEnv).ownMark = value
  mark(state.tokens, value)
}

export function githubRawHtml (md: MarkdownIt): void {
  const tagfilter = (html: string): string => html.replace(DISALLOWED_TAG, '&lt;$1$2')
  md.renderer.rules.html_block = (tokens, index) => tagfilter(tokens[index]!.content)
  md.renderer.rules.html_inline = (tokens, index) => tagfilter(tokens[index]!.content)
  // Last: after the heading ids and every other rule that sets attributes.
  md.core.ruler.push('mark_own_markup', markOwnMarkup)
}
