/** GFM to HTML safe to embed, work bounded by the input's size whatever its shape; only markdown-it's public API. */
import MarkdownIt, { type Options, type RendererRule, type StateInline, type Token } from 'markdown-it'
import { extendedAutolinks } from './extended-autolinks.js'
import { taskLists } from './task-lists.js'
import { budgetPaddedTableCells } from './padded-tables.js'
import { budgetReusedReferences } from './reused-references.js'
import { limitDeepQuotes } from './deep-quotes.js'
import { flattenDeepContainers } from './deep-containers.js'
import { githubFootnotes } from './footnotes.js'
import { budgetFootnoteReferences } from './footnote-references.js'
import { githubAlerts } from './alerts.js'
import { githubEmoji } from './emoji.js'
import { headingAnchors } from './anchors.js'
import { githubRawHtml, ownFragment, ownMarkOf } from './raw-html.js'
import { sanitizeHtml } from './github-html.js'
import { highlightCode } from './code-highlight.js'
import { githubMath, mathml } from './math.js'

/** In characters as JSON Schema counts them; the request schema enforces it. */
export const MAX_MARKDOWN_LENGTH = 1_048_576

/** markdown-it's `maxNesting`, keeping each line's cost linear; deeper containers become text (deep-containers.ts). */
export const MAX_NESTING = 20

export { MAX_BLOCKQUOTE_DEPTH } from './deep-quotes.js'
export { MAX_TABLE_CELLS } from './padded-tables.js'
export { LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR } from './reused-references.js'
export { MAX_FOOTNOTE_REFERENCES } from './footnote-references.js'

const BLOCKED_SCHEMES = new Set(['javascript', 'vbscript', 'file', 'data'])
const SAFE_DATA_IMAGE = /^data:image\/(?:gif|png|jpeg|webp)[;,]/
const SCHEME = /^([a-z][a-z0-9+.-]*):/
// eslint-disable-next-line no-control-regex -- a browser strips these C0 controls from a URL, so the pattern names them
const EDGE_CONTROLS_AND_SPACES = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g
const TAB_AND_NEWLINES = /[\t\n\r]/g
const PERCENT_ESCAPE = /%([0-9a-f]{2})/gi
/** Allowed (or no) scheme, unchangeable by stripping or percent-decoding: no further check needed. */
const PLAINLY_SAFE = /^(?:https?:\/\/|[#/])/i

function hasSafeScheme (url: string): boolean {
  // As a browser's URL parser reads it before the scheme (WHATWG URL, steps 1–3).
  const candidate = url.replace(EDGE_CONTROLS_AND_SPACES, '').replace(TAB_AND_NEWLINES, '').toLowerCase()
  const scheme = SCHEME.exec(candidate)?.[1]
  if (scheme === undefined || !BLOCKED_SCHEMES.has(scheme)) return true
  return SAFE_DATA_IMAGE.test(candidate)
}

/** Refuses `javascript:`, `vbscript:`, `file:`, `data:` (but images), stripped as browsers do and percent-decoded. */
export function isSafeUrl (url: string): boolean {
  if (PLAINLY_SAFE.test(url)) return true
  const decoded = url.replace(PERCENT_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return hasSafeScheme(url) && hasSafeScheme(decoded)
}

const TILDE = 0x7e

/** GFM 0.29 example 493: three or more tildes are text; markdown-it would strike with `~~` pairs of them. */
function tildeRunsAsText (state: StateInline, silent: boolean): boolean {
  const start = state.pos
  let end = start
  while (end < state.posMax && state.src.charCodeAt(end) === TILDE) end++
  if (end - start < 3) return false
  if (!silent) state.pending += state.src.slice(start, end)
  state.pos = end
  return true
}

/** markdown-it leaves escapes and entities out of alt text (`![a&amp;b](u)` gets `alt="ab"`), unlike CommonMark. */
function keepEscapesInAltText (renderImage: RendererRule): RendererRule {
  const escapesAsText = (tokens: Token[]): void => {
    for (const token of tokens) {
      if (token.type === 'text_special') token.type = 'text'
      else if (token.type === 'image') escapesAsText(token.children ?? [])
    }
  }
  return (tokens, index, options, env, self) => {
    escapesAsText(tokens[index]!.children ?? [])
    return renderImage(tokens, index, options, env, self)
  }
}

export type RawHtml = 'github' | 'escape'

export interface MarkdownFeatures {
  readonly rawHtml: RawHtml
  readonly highlight: boolean
  readonly math: boolean
}

export const DEFAULT_MARKDOWN_FEATURES: MarkdownFeatures = { rawHtml: 'github', highlight: true, math: true }

/** As markdown-it reads it for the `language-` class. */
const fenceLanguage = (md: MarkdownIt, token: Token): string =>
  md.utils.unescapeAll(token.info).trim().split(/\s+/, 1)[0] ?? ''

/** Through markdown-it's fence rule, which writes `<pre><code class="language-…">`; highlighting is an own fragment. */
function highlightedAndMathFences (md: MarkdownIt, features: MarkdownFeatures): void {
  const fence = md.renderer.rules.fence!
  md.renderer.rules.fence = (tokens, index, options, env, self) => {
    const token = tokens[index]!
    const language = fenceLanguage(md, token)
    if (features.math && language === 'math') {
      const rendered = mathml(token.content, true, env)
      // One that does not parse stays a `language-math` code block.
      if (rendered !== undefined) return ownFragment(env, rendered) + '\n'
    }
    const highlighted = features.highlight ? highlightCode(token.content, language, env) : undefined
    if (highlighted === undefined) return fence(tokens, index, options, env, self)
    return fence(tokens, index, { ...options, highlight: () => ownFragment(env, highlighted) }, env, self)
  }
}

function createRenderer (features: MarkdownFeatures): MarkdownIt {
  const { rawHtml } = features
  // markdown-it reads maxNesting from its options; @types/markdown-it does not declare it.
  const options: Options & { maxNesting: number } = {
    html: rawHtml === 'github',
    linkify: false,
    typographer: false,
    maxNesting: MAX_NESTING
  }
  const md = new MarkdownIt('commonmark', options).enable(['table', 'strikethrough'])
  md.validateLink = isSafeUrl
  md.inline.ruler.before('strikethrough', 'tilde_runs_as_text', tildeRunsAsText)
  md.renderer.rules.image = keepEscapesInAltText(md.renderer.rules.image!)
  md.use(extendedAutolinks)
  md.use(taskLists)
  md.use(githubFootnotes)
  md.use(githubAlerts)
  md.use(githubEmoji)
  md.use(headingAnchors)
  md.use(limitDeepQuotes)
  // After the footnotes, whose definitions it bounds too.
  md.use(flattenDeepContainers)
  md.use(budgetPaddedTableCells)
  md.use(budgetReusedReferences)
  md.use(budgetFootnoteReferences)
  if (features.math) md.use(githubMath)
  if (features.highlight || features.math) highlightedAndMathFences(md, features)
  if (rawHtml === 'github') md.use(githubRawHtml)
  return md
}

/** One per feature combination (eight), indexed by their bits: cheaper than a string key each render. */
const renderers: Array<MarkdownIt | undefined> = []

function rendererFor (features: MarkdownFeatures): MarkdownIt {
  const index = (features.rawHtml === 'github' ? 4 : 0) + (features.highlight ? 2 : 0) + (features.math ? 1 : 0)
  return (renderers[index] ??= createRenderer(features))
}

/** What of `features` the document can use: math needs `$` or a fence, highlighting a fence, raw HTML a `<`. */
export function featuresUsedBy (source: string, features: MarkdownFeatures): MarkdownFeatures {
  const fenced = source.includes('```') || source.includes('~~~')
  const math = features.math && (fenced || source.includes('$'))
  const highlight = features.highlight && fenced
  const rawHtml = features.rawHtml === 'github' && !source.includes('<') ? 'escape' : features.rawHtml
  if (math === features.math && highlight === features.highlight && rawHtml === features.rawHtml) return features
  return { rawHtml, highlight, math }
}

/** Sanitized whole with raw HTML under `github`; otherwise its highlighted blocks and formulas are. */
export function renderSafeMarkdown (source: string, features: MarkdownFeatures = DEFAULT_MARKDOWN_FEATURES): string {
  return renderWith(source, featuresUsedBy(source, features))
}

/** renderSafeMarkdown with every one of `features` on, used or not: what featuresUsedBy must not change. */
export function renderWith (source: string, features: MarkdownFeatures): string {
  const env = {}
  const html = rendererFor(features).render(source, env)
  const mark = ownMarkOf(env)
  return mark === undefined ? html : sanitizeHtml(html, { mark })
}
