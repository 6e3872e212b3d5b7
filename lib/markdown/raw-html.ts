import { randomBytes } from 'node:crypto'
import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'

/**
 * Raw HTML as GitHub renders it, the markdown-it side: the GFM tagfilter on raw HTML, and a mark on
 * the service's own markup so that the sanitizer (github-html.ts) keeps it and nothing else.
 *
 * The mark is the attribute `data-meridian-own` with a value drawn at random for each render
 * (`ownMarkOf`): raw HTML cannot know it, so it cannot forge it. It is added only to a render
 * that is sanitized: without raw HTML the output is markdown-it's, as it always was.
 */

/** The tagfilter's tags (GFM 0.29, "Disallowed Raw HTML"): in raw HTML their `<` becomes `&lt;`, so they show as text. */
const DISALLOWED_TAG = /<(\/?)(title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\t\n\f\r />]|$)/gi

const STARTS_WITH_DISALLOWED_TAG = new RegExp(`^${DISALLOWED_TAG.source}`, 'i')

/** Whether a raw HTML tag is one the tagfilter shows as text, so that it counts as text (in a heading's slug). */
export const isShownAsText = (tag: string): boolean => STARTS_WITH_DISALLOWED_TAG.test(tag)

export const OWN_MARK_ATTRIBUTE = 'data-meridian-own'

interface OwnMarkEnv { ownMark?: string, ownFragments?: string[] }

/** The element that stands for an own fragment in a sanitized render (github-html.ts puts the fragment in its place). */
export const OWN_FRAGMENT_TAG = 'meridian-fragment'

/** The mark of this render's own markup, set while parsing a document that holds raw HTML: its render is to be sanitized. */
export const ownMarkOf = (env: object): string | undefined => (env as OwnMarkEnv).ownMark

/** ` data-meridian-own="…"`, to follow the tag name of an element a renderer writes as a string; `''` when the render is not sanitized. */
export function ownMarkAttribute (env: object): string {
  const mark = ownMarkOf(env)
  return mark === undefined ? '' : ` ${OWN_MARK_ATTRIBUTE}="${mark}"`
}

/** The own fragments of a sanitized render, by index. */
export const ownFragmentsOf = (env: object): readonly string[] => (env as OwnMarkEnv).ownFragments ?? []

/**
 * Markup the service writes whole (highlighted code, MathML): itself in a render that is not
 * sanitized; in one that is, an element with the render's mark standing for it, so that the
 * sanitizer, which would take its classes and MathML away, never sees it, and raw HTML cannot
 * forge one.
 */
export function ownFragment (env: object, html: string): string {
  const own = env as OwnMarkEnv
  if (own.ownMark === undefined) return html
  own.ownFragments ??= []
  own.ownFragments.push(html)
  return `<${OWN_FRAGMENT_TAG} ${OWN_MARK_ATTRIBUTE}="${own.ownMark}" data-index="${own.ownFragments.length - 1}"></${OWN_FRAGMENT_TAG}>`
}

/** Whether a parsed document holds raw HTML, so that its render must be sanitized. */
function holdsRawHtml (tokens: readonly Token[]): boolean {
  for (const token of tokens) {
    if (token.type === 'html_block') return true
    if (token.type === 'inline' && token.children?.some((child) => child.type === 'html_inline') === true) return true
  }
  return false
}

/** The block tokens whose attributes are the service's own: heading ids, table alignment, alerts, a fence's language. */
function marksOwnAttributes (token: Token): boolean {
  switch (token.type) {
    case 'heading_open':
    case 'alert_open':
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

/** In a document with raw HTML, draws the render's mark into its env and marks the own markup; any other is left as it is. */
function markOwnMarkup (state: StateCore): void {
  if (!holdsRawHtml(state.tokens)) return
  const mark = randomBytes(12).toString('base64url')
  ;(state.env as OwnMarkEnv).ownMark = mark
  for (const token of state.tokens) {
    // First of its attributes: github-html.ts takes an element for the service's own only then.
    if (marksOwnAttributes(token)) token.attrs = [[OWN_MARK_ATTRIBUTE, mark], ...(token.attrs ?? [])]
  }
}

export function githubRawHtml (md: MarkdownIt): void {
  const tagfilter = (html: string): string => html.replace(DISALLOWED_TAG, '&lt;$1$2')
  md.renderer.rules.html_block = (tokens, index) => tagfilter(tokens[index]!.content)
  md.renderer.rules.html_inline = (tokens, index) => tagfilter(tokens[index]!.content)
  // Last: after the heading ids and every other rule that sets attributes.
  md.core.ruler.push('mark_own_markup', markOwnMarkup)
}
