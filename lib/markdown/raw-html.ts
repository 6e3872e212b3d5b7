import { randomBytes } from 'node:crypto'
import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'

/**
 * Raw HTML as GitHub renders it, markdown-it side: the GFM tagfilter, and a mark on the service's own markup, the
 * only markup the sanitizer (github-html.ts) trusts. Its value is random per render, so raw HTML cannot forge it;
 * a render without raw HTML is not sanitized and carries no mark.
 */

/** GFM 0.29's tagfilter ("Disallowed Raw HTML"): their `<` becomes `&lt;`. */
const DISALLOWED_TAG = /<(\/?)(title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\t\n\f\r />]|$)/gi

const STARTS_WITH_DISALLOWED_TAG = new RegExp(`^${DISALLOWED_TAG.source}`, 'i')

/** A tag the tagfilter shows as text counts as text (in a heading's slug). */
export const isShownAsText = (tag: string): boolean => STARTS_WITH_DISALLOWED_TAG.test(tag)

export const OWN_MARK_ATTRIBUTE = 'data-meridian-own'

interface OwnMarkEnv { ownMark?: string, ownFragments?: string[] }

/** Stands for an own fragment in a sanitized render; github-html.ts puts the fragment back. */
export const OWN_FRAGMENT_TAG = 'meridian-fragment'

/** Set only for a document with raw HTML, whose render is then sanitized. */
export const ownMarkOf = (env: object): string | undefined => (env as OwnMarkEnv).ownMark

/** For renderers that write a tag as a string; `''` when the render is not sanitized. */
export function ownMarkAttribute (env: object): string {
  const mark = ownMarkOf(env)
  return mark === undefined ? '' : ` ${OWN_MARK_ATTRIBUTE}="${mark}"`
}

/** Indexed by the placeholder's `data-index`. */
export const ownFragmentsOf = (env: object): readonly string[] => (env as OwnMarkEnv).ownFragments ?? []

/**
 * Markup written whole (highlighted code, MathML). In a sanitized render a marked placeholder stands for it, so the
 * sanitizer never strips its classes and MathML, and raw HTML cannot forge one.
 */
export function ownFragment (env: object, html: string): string {
  const own = env as OwnMarkEnv
  if (own.ownMark === undefined) return html
  own.ownFragments ??= []
  own.ownFragments.push(html)
  return `<${OWN_FRAGMENT_TAG} ${OWN_MARK_ATTRIBUTE}="${own.ownMark}" data-index="${own.ownFragments.length - 1}"></${OWN_FRAGMENT_TAG}>`
}

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

function markOwnMarkup (state: StateCore): void {
  if (!holdsRawHtml(state.tokens)) return
  const mark = randomBytes(12).toString('base64url')
  ;(state.env as OwnMarkEnv).ownMark = mark
  for (const token of state.tokens) {
    // First: github-html.ts trusts a mark only as an element's first attribute.
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
