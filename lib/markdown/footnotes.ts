/** markdown-it-footnote's parser with micromark's HTML, bent where GitHub differs or hostile input was quadratic. */
import type MarkdownIt from 'markdown-it'
import type { PluginSimple, StateCore, Token } from 'markdown-it'
import markdownItFootnote from 'markdown-it-footnote'
import { wrapBlockRule } from './wrap-block-rule.js'
import { wrapInlineRule } from './wrap-inline-rule.js'
import { ownMarkAttribute } from './raw-html.js'

/** GitHub's (micromark's), as CommonMark's for link labels. */
const MAX_LABEL_LENGTH = 999
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const CARET = 0x5e

/** GitHub's, so that no id of a document clobbers one of the page. */
export const ID_PREFIX = 'user-content-'
const SECTION_HEADING_ID = 'footnote-label'

const isLabelCharacter = (code: number): boolean =>
  code !== OPEN_BRACKET && code !== CLOSE_BRACKET && code > 0x20 && code !== 0x7f

/** The label of a `[^label]` at `start`, by GitHub's grammar, or null; reads at most 1,002 characters. */
export function footnoteLabelAt (source: string, start: number, end: number): string | null {
  if (source.charCodeAt(start) !== OPEN_BRACKET || source.charCodeAt(start + 1) !== CARET) return null
  const last = Math.min(end, start + 2 + MAX_LABEL_LENGTH)
  let position = start + 2
  while (position < last && isLabelCharacter(source.charCodeAt(position))) position++
  if (position === start + 2 || source.charCodeAt(position) !== CLOSE_BRACKET || position >= end) return null
  return source.slice(start + 2, position)
}

interface FootnoteEnv {
  footnotes?: { refs?: Record<string, number> }
  /** Labels with a definition, normalized. */
  footnoteLabels?: Set<string>
  /** Without ID_PREFIX, for in-document links. */
  footnoteIds?: Set<string>
}

interface FootnoteUse { number: number, id: string, use: number }

function definitionsFollowGitHub (md: MarkdownIt): void {
  wrapBlockRule(md, 'footnote_def', ['paragraph', 'reference'], (definition) => (state, startLine, endLine, silent) => {
    const start = state.bMarks[startLine]! + state.tShift[startLine]!
    const label = footnoteLabelAt(state.src, start, state.eMarks[startLine]!)
    if (label === null || !definition(state, startLine, endLine, silent)) return false
    if (!silent) {
      const env = state.env as FootnoteEnv
      ;(env.footnoteLabels ??= new Set()).add(md.utils.normalizeReference(label))
    }
    return true
  })
}

function referencesFollowGitHub (md: MarkdownIt): void {
  wrapInlineRule(md, 'footnote_ref', (reference) => (state, silent) => {
    const env = state.env as FootnoteEnv
    if (env.footnoteLabels === undefined) return false
    const label = footnoteLabelAt(state.src, state.pos, state.posMax)
    if (label === null || !env.footnoteLabels.has(md.utils.normalizeReference(label))) return false
    // The plugin matches labels as written: this spelling of a defined label is defined too.
    const refs = env.footnotes?.refs
    if (refs !== undefined && refs[`:${label}`] === undefined) refs[`:${label}`] = -1
    return reference(state, silent)
  })
}

function footnoteId (md: MarkdownIt, normalizedLabel: string): string {
  return md.utils.lib.mdurl.encode(normalizedLabel.toLowerCase())
}

interface Definition { label: string, tokens: Token[] }

/** One pass: definitions out of the document, references numbered by first use, an item per referenced label. */
function closingSection (md: MarkdownIt) {
  return (state: StateCore): void => {
    const env = state.env as FootnoteEnv
    if (env.footnoteLabels === undefined) return
    const numbers = new Map<string, FootnoteUse>()
    const order: string[] = []
    const document: Token[] = []
    const definitions = new Map<string, Token[]>()
    const open: Definition[] = []
    for (const token of state.tokens) {
      if (token.type === 'footnote_reference_open') {
        open.push({ label: md.utils.normalizeReference((token.meta as { label: string }).label), tokens: [] })
        continue
      }
      if (token.type === 'footnote_reference_close') {
        const definition = open.pop()!
        if (!definitions.has(definition.label)) definitions.set(definition.label, definition.tokens)
        continue
      }
      ;(open.at(-1)?.tokens ?? document).push(token)
      if (token.type !== 'inline') continue
      for (const child of token.children ?? []) {
        if (child.type !== 'footnote_ref') continue
        const label = md.utils.normalizeReference((child.meta as { label: string }).label)
        let first = numbers.get(label)
        if (first === undefined) {
          first = { number: order.push(label), id: footnoteId(md, label), use: 0 }
          numbers.set(label, first)
        }
        child.meta = { number: first.number, id: first.id, use: ++first.use } satisfies FootnoteUse
      }
    }
    state.tokens = document
    if (order.length === 0) return
    env.footnoteIds = new Set([SECTION_HEADING_ID])
    document.push(new state.Token('footnote_block_open', 'section', 1))
    for (const label of order) {
      const { number, id, use: uses } = numbers.get(label)!
      env.footnoteIds.add(`fn-${id}`)
      const item = new state.Token('footnote_open', 'li', 1)
      item.meta = { id }
      document.push(item)
      const content = definitions.get(label) ?? []
      // As GitHub: back-references end the last paragraph, or else stand on a line of their own.
      const lastParagraph = content.at(-1)?.type === 'paragraph_close' ? content.pop() : undefined
      for (const token of content) document.push(token)
      for (let use = 1; use <= uses; use++) {
        env.footnoteIds.add(use === 1 ? `fnref-${id}` : `fnref-${id}-${use}`)
        const backReference = new state.Token('footnote_anchor', 'a', 0)
        backReference.meta = { number, id, use } satisfies FootnoteUse
        backReference.info = lastParagraph === undefined
          ? (use === uses ? 'own line, last' : 'own line')
          : 'in paragraph'
        document.push(backReference)
      }
      if (lastParagraph !== undefined) document.push(lastParagraph)
      document.push(new state.Token('footnote_close', 'li', -1))
    }
    document.push(new state.Token('footnote_block_close', 'section', -1))
  }
}

const referenceId = ({ id, use }: FootnoteUse): string => `${ID_PREFIX}fnref-${id}${use > 1 ? `-${use}` : ''}`

function githubHtml (md: MarkdownIt): void {
  const escape = md.utils.escapeHtml
  const rules = md.renderer.rules
  rules.footnote_ref = (tokens, index, _options, env) => {
    const use = tokens[index]!.meta as FootnoteUse
    return `<sup><a${ownMarkAttribute(env)} href="#${ID_PREFIX}fn-${escape(use.id)}" ` +
      `id="${escape(referenceId(use))}" data-footnote-ref="" ` +
      `aria-describedby="${ID_PREFIX}${SECTION_HEADING_ID}">${use.number}</a></sup>`
  }
  rules.footnote_block_open = (_tokens, _index, _options, env) =>
    `<section${ownMarkAttribute(env)} data-footnotes="" class="footnotes">` +
    `<h2${ownMarkAttribute(env)} id="${ID_PREFIX}${SECTION_HEADING_ID}" class="sr-only">Footnotes</h2>\n<ol>\n`
  rules.footnote_block_close = () => '</ol>\n</section>\n'
  rules.footnote_open = (tokens, index, _options, env) =>
    `<li${ownMarkAttribute(env)} id="${ID_PREFIX}fn-${escape((tokens[index]!.meta as { id: string }).id)}">\n`
  rules.footnote_close = () => '</li>\n'
  rules.footnote_anchor = (tokens, index, _options, env) => {
    const token = tokens[index]!
    const use = token.meta as FootnoteUse
    const link = `<a${ownMarkAttribute(env)} href="#${escape(referenceId(use))}" data-footnote-backref="" ` +
      `aria-label="Back to reference ${use.number}${use.use > 1 ? `-${use.use}` : ''}" class="data-footnote-backref">` +
      `↩${use.use > 1 ? `<sup>${use.use}</sup>` : ''}</a>`
    if (token.info === 'in paragraph') return ' ' + link
    return (use.use > 1 ? ' ' : '') + link + (token.info === 'own line, last' ? '\n' : '')
  }
}

export function githubFootnotes (md: MarkdownIt): void {
  // Its types are declared against markdown-it's CommonJS types, which differ from the ES module's.
  md.use(markdownItFootnote as unknown as PluginSimple)
  md.inline.ruler.disable('footnote_inline')
  definitionsFollowGitHub(md)
  referencesFollowGitHub(md)
  md.core.ruler.at('footnote_tail', closingSection(md))
  githubHtml(md)
}

export const footnoteIdsOf = (env: object): ReadonlySet<string> => (env as FootnoteEnv).footnoteIds ?? new Set()
