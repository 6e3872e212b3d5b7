import MarkdownIt, { type Options, type ParserInline, type Renderer, type Ruler, type StateBlock, type StateCore, type StateInline, type Token } from 'markdown-it'

/**
 * Markdown to HTML that is safe to embed: CommonMark plus GitHub tables and strikethrough,
 * raw HTML escaped, dangerous URL schemes never emitted as links, and work bounded by the size
 * of the input whatever its shape. Knows nothing of HTTP.
 */

/** Longest accepted source, in characters as JSON Schema counts them; the request schema enforces it. */
export const MAX_MARKDOWN_LENGTH = 1_048_576

/**
 * markdown-it's nesting limit (blocks and inline links/images). Kept at the CommonMark
 * preset's 20: measured, no category's cost per byte grows with it except block quotes,
 * which have their own, lower cap below. Containers that would pass it stay text (see
 * `refuseBeyondNesting`), because markdown-it itself would drop the rest of the document.
 */
export const MAX_NESTING = 20

/**
 * Deepest block quote. markdown-it rescans each line once per open quote, and a lazy
 * continuation line (`b` after `> > > a`) costs that without the `>` markers that would make
 * the input grow with it: measured, each level adds ~0.2 s to 1 MiB of one-letter lines (1.6 s).
 * Deeper `>` markers render as text.
 */
export const MAX_BLOCKQUOTE_DEPTH = 6

/**
 * Table cells per document. GitHub tables pad short rows with empty cells, so a 2 KB table can
 * expand to 65,536 cells (markdown-it's own cap is per table); past this budget a table
 * renders as text, which keeps output linear in the input.
 */
export const MAX_TABLE_CELLS = 100_000

/**
 * `~~` markers per document that may strike. Each costs markdown-it two tokens and a delimiter
 * that live until the render ends; on 1 MiB of `~~a ~~a …` the collector's copying of them made
 * 1 MiB take 20–25 times the 100 KiB time. Past the budget a `~~` is text. A README-like
 * document uses under a thousand per MiB.
 */
export const MAX_STRIKETHROUGH_MARKERS = 10_000

/**
 * Link and image attributes (href, src, title) may total this many times the source length.
 * A reference definition can be used any number of times, each use copying its URL and title
 * (`[r]: /<100 KB>` then `[r][r][r]…`): past the budget, links and images lose those attributes.
 */
export const LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR = 10

const BLOCKED_SCHEMES = new Set(['javascript', 'vbscript', 'file', 'data'])
const SAFE_DATA_IMAGE = /^data:image\/(?:gif|png|jpeg|webp)[;,]/
const SCHEME = /^([a-z][a-z0-9+.-]*):/
/* eslint-disable-next-line no-control-regex */
const EDGE_CONTROLS_AND_SPACES = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g
const TAB_AND_NEWLINES = /[\t\n\r]/g
const PERCENT_ESCAPE = /%([0-9a-f]{2})/gi

/** The URL as a browser's URL parser sees it before reading the scheme (WHATWG URL, step 1–3). */
function asBrowserReadsIt (url: string): string {
  return url.replace(EDGE_CONTROLS_AND_SPACES, '').replace(TAB_AND_NEWLINES, '').toLowerCase()
}

function hasSafeScheme (url: string): boolean {
  const candidate = asBrowserReadsIt(url)
  const scheme = SCHEME.exec(candidate)?.[1]
  if (scheme === undefined || !BLOCKED_SCHEMES.has(scheme)) return true
  return SAFE_DATA_IMAGE.test(candidate)
}

/**
 * The URL policy for links, images, autolinks and reference definitions: refuse the schemes
 * `javascript:`, `vbscript:`, `file:` and `data:` (except `data:image/gif|png|jpeg|webp`).
 *
 * markdown-it calls it with the destination already entity-decoded and percent-encoded, which
 * is exactly the attribute value a browser will read. markdown-it's default only trims and
 * lowercases; this one also strips what a browser strips (C0 controls and spaces at the ends,
 * tabs and newlines anywhere) and checks the percent-decoded form too, so `java%09script:` and
 * `%01javascript:` are refused even though a browser would read them as relative paths.
 * Refusing is always safe: the destination then renders as plain text.
 */
export function isSafeUrl (url: string): boolean {
  const decoded = url.replace(PERCENT_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return hasSafeScheme(url) && hasSafeScheme(decoded)
}

/** Per-render state: what is left of the bounds, and what our rules track as they parse. markdown-it hands it to every rule as `state.env`. */
interface RenderState {
  blockquoteDepth: number
  tableCellsLeft: number
  strikethroughMarkersLeft: number
  /** The lists being parsed, innermost last. */
  openLists: OpenList[]
}

type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean
type InlineRule = (state: StateInline, silent: boolean) => boolean

/**
 * Replaces one of markdown-it's rules with a wrapper around it. markdown-it exposes the built-in
 * rule functions only through the ruler's internal list; a missing rule fails at start-up rather
 * than silently dropping a bound.
 */
function wrapRule<Rule> (ruler: Ruler<Rule>, name: string, wrap: (original: Rule) => Rule): void {
  const { __rules__: rules } = ruler as unknown as { __rules__: Array<{ name: string, fn: Rule, alt: string[] }> }
  const rule = rules.find((candidate) => candidate.name === name)
  if (rule === undefined) throw new Error(`markdown-it has no rule named ${name}`)
  ruler.at(name, wrap(rule.fn), { alt: [...rule.alt] })
}

/**
 * A container whose content would reach `maxNesting` is not opened: its marker stays text.
 * (markdown-it would open it and then skip everything up to the end of the enclosing block,
 * which for a list item is the rest of the document.) `levels` is how many nesting levels the
 * container opens before its content: 1 for a block quote, 2 for a list (list and item).
 *
 * A paragraph asks the rule (`silent`) whether a line ends it. A line indented less than the
 * innermost container's content does not open inside it: it closes containers first, so the
 * depth here is not its depth, and it may still end the paragraph. Refusing it too would turn
 * every later list item of the document into text of the deepest paragraph.
 */
function refuseBeyondNesting (levels: number) {
  return (original: BlockRule): BlockRule => (state, startLine, endLine, silent) => {
    const opensInside = !silent || state.sCount[startLine]! >= state.blkIndent
    return (!opensInside || state.level + levels < MAX_NESTING) && original(state, startLine, endLine, silent)
  }
}

function limitBlockquoteDepth (original: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) => {
    const budget = state.env as RenderState
    if (budget.blockquoteDepth >= MAX_BLOCKQUOTE_DEPTH) return false
    budget.blockquoteDepth++
    try {
      return original(state, startLine, endLine, silent)
    } finally {
      budget.blockquoteDepth--
    }
  }
}

function limitTableCells (original: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) => {
    const budget = state.env as RenderState
    if (budget.tableCellsLeft <= 0) return false
    const firstNewToken = state.tokens.length
    const matched = original(state, startLine, endLine, silent)
    for (let index = firstNewToken; index < state.tokens.length; index++) {
      const type = state.tokens[index]?.type
      if (type === 'td_open' || type === 'th_open') budget.tableCellsLeft--
    }
    return matched
  }
}

/** Type of the token that stands for a finished list or block quote (see `renderWhenFinished`). */
const RENDERED_CONTAINER = 'rendered_container'
/** Type of the token that stands for finished items of a list still being parsed (see `renderFinishedItem`). */
const RENDERED_ITEMS = 'rendered_items'

/**
 * Finished blocks' HTML with their inline content still as source: `html[0]`, `inline[0]`,
 * `html[1]`, … `html[inline.length]`. Inline content waits for the end of the block parse,
 * which is when every reference definition is known.
 */
interface RenderedBlocks {
  html: string[]
  inline: string[]
}

/** List items rendered both ways, since a list is known to be tight only at its end: `tight` hides the items' own paragraphs. */
interface RenderedItems extends RenderedBlocks {
  tight: string[]
}

/** A list whose items are being parsed. */
interface OpenList {
  /**
   * The first paragraph of the first item that has one, left as tokens: markdown-it hides it at
   * the list's end if the list is tight. A list without such a paragraph renders the same either way.
   */
  tightnessProbe: Token | null
}

/** The newline markdown-it's renderer writes before a block's opening tag that follows a hidden (tight) paragraph. */
function newlineAfterHiddenParagraph (tokens: Token[], index: number): string {
  return index > 0 && tokens[index - 1]!.hidden ? '\n' : ''
}

/** A token other than inline content, as markdown-it's `Renderer#render` writes it: by its type's rule, or as a tag. */
function renderBlockToken (renderer: Renderer, tokens: Token[], index: number, options: Options, env: unknown): string {
  const rule = renderer.rules[tokens[index]!.type]
  return rule !== undefined ? rule(tokens, index, options, env, renderer) : renderer.renderToken(tokens, index, options)
}

/** V8 keeps a string built by `+=` as a tree of its pieces until something reads its characters. */
function flattened (text: string): string {
  text.charCodeAt(0)
  return text
}

/**
 * Renders `tokens[first…]` as markdown-it's renderer would in place, but for inline content.
 * The first token is an opening tag, after which markdown-it writes a newline if the token before
 * it is a hidden paragraph. That flag is never set yet here: markdown-it hides a tight list's
 * paragraphs when the list ends, which is when the list is replaced. So that newline is left to
 * whoever renders the replacement (`newlineAfterHiddenParagraph`).
 */
function renderBlockTokens (state: StateBlock, first: number, itemsTight: boolean): RenderedBlocks {
  const { tokens, md, env } = state
  const rendered: RenderedBlocks = { html: [], inline: [] }
  let html = ''
  for (let index = first; index < tokens.length; index++) {
    const token = tokens[index]!
    if (token.type === 'inline') {
      rendered.html.push(flattened(html))
      rendered.inline.push(token.content)
      html = ''
    } else if (token.type === RENDERED_CONTAINER || token.type === RENDERED_ITEMS) {
      const blocks = token.meta as RenderedBlocks | RenderedItems
      const pieces = itemsTight && 'tight' in blocks ? blocks.tight : blocks.html
      html += newlineAfterHiddenParagraph(tokens, index) + pieces[0]!
      for (let slot = 0; slot < blocks.inline.length; slot++) {
        rendered.html.push(flattened(html))
        rendered.inline.push(blocks.inline[slot]!)
        html = pieces[slot + 1]!
      }
    } else {
      html += renderBlockToken(md.renderer, tokens, index, md.options, env)
    }
  }
  rendered.html.push(flattened(html))
  return rendered
}

function replaceTokens (state: StateBlock, first: number, type: string, meta: RenderedBlocks | RenderedItems): void {
  const token = new state.Token(type, '', 0)
  token.block = true
  token.meta = meta
  state.tokens.length = first
  state.tokens.push(token)
}

/**
 * Sources at least this long have their lists and block quotes rendered as each is parsed (below).
 * A shorter one's tokens are few enough to keep until the end, where rendering them costs less: a
 * list's items are not rendered twice, tight and loose (8% of a 5 KB README's render). The HTML
 * is the same either way; tests compare both with markdown-it's.
 */
export const EAGER_RENDER_MIN_LENGTH = 32_768

const rendersEagerly = (state: StateBlock): boolean => state.src.length >= EAGER_RENDER_MIN_LENGTH

/**
 * Once a list or block quote is parsed, its tokens are final: an enclosing list's tightness
 * hides only its own items' paragraphs, never a nested container's. So they are rendered there
 * and replaced by one token holding the HTML. markdown-it keeps a document's tokens, with their
 * source maps, until the render ends (1.2 KB per item of a `- a` list, measured), promoted out of
 * V8's young generation on large inputs and copied by every later collection. The HTML is the
 * same as rendering the tokens at the end.
 *
 * The container's opening tag follows the token before it, whose `hidden` flag may still change
 * (an enclosing list found tight); the newline that flag decides is written by whoever renders
 * the replacement.
 */
function renderWhenFinished (original: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) => {
    const first = state.tokens.length
    if (!original(state, startLine, endLine, silent)) return false
    if (!silent && rendersEagerly(state)) replaceTokens(state, first, RENDERED_CONTAINER, renderBlockTokens(state, first, false))
    return true
  }
}

/** `renderWhenFinished` for a list, whose items `renderFinishedItem` has rendered both ways as they ended. */
function renderListWhenFinished (original: BlockRule): BlockRule {
  return (state, startLine, endLine, silent) => {
    if (silent || !rendersEagerly(state)) return original(state, startLine, endLine, silent)
    const { openLists } = state.env as RenderState
    const list: OpenList = { tightnessProbe: null }
    const first = state.tokens.length
    openLists.push(list)
    try {
      if (!original(state, startLine, endLine, silent)) return false
    } finally {
      openLists.pop()
    }
    replaceTokens(state, first, RENDERED_CONTAINER, renderBlockTokens(state, first, list.tightnessProbe?.hidden === true))
    return true
  }
}

/**
 * A list item's tokens, from `list_item_open`, once its content is parsed: final but for the
 * `hidden` flag of its own paragraphs, which markdown-it sets when the list ends, if it is tight.
 * So the item is rendered both ways and replaced, and the list picks one way when it ends (see
 * `renderListWhenFinished`); runs of items share one token. The first item with a paragraph stays
 * as tokens, to learn the list's tightness from.
 */
function renderFinishedItem (state: StateBlock, firstContent: number): void {
  const { tokens } = state
  const list = (state.env as RenderState).openLists.at(-1)
  // An empty item's opening tag depends on the closing one that follows, not pushed yet.
  if (list === undefined || tokens[firstContent - 1]?.type !== 'list_item_open' || firstContent === tokens.length) return
  const ownParagraphs: Token[] = []
  for (let index = firstContent; index < tokens.length; index++) {
    const token = tokens[index]!
    if (token.type === 'paragraph_open' && token.level === state.level) ownParagraphs.push(token, tokens[index + 2]!)
  }
  if (ownParagraphs.length > 0 && list.tightnessProbe === null) {
    list.tightnessProbe = ownParagraphs[0]!
    return
  }
  const item = renderBlockTokens(state, firstContent - 1, false)
  for (const token of ownParagraphs) token.hidden = true
  const tight = ownParagraphs.length > 0 ? renderBlockTokens(state, firstContent - 1, false).html : [...item.html]
  const previous = tokens[firstContent - 3]
  const previousClose = tokens[firstContent - 2]
  if (previous?.type !== RENDERED_ITEMS || previousClose?.type !== 'list_item_close') {
    replaceTokens(state, firstContent - 1, RENDERED_ITEMS, { html: item.html, inline: item.inline, tight })
    return
  }
  const items = previous.meta as RenderedItems
  const close = state.md.renderer.renderToken(tokens, firstContent - 2, state.md.options)
  appendPieces(items.html, close, item.html)
  appendPieces(items.tight, close, tight)
  for (const source of item.inline) items.inline.push(source)
  cutLongLastPiece(items)
  tokens.length = firstContent - 2
}

/** Longest HTML a run of items without inline content grows into one piece (see `cutLongLastPiece`). */
const MAX_PIECE_LENGTH = 4096

/**
 * Items without inline content (`- ***` lines) all add to the last piece. Left to grow, it is one
 * string of V8's pieces as long as the run, promoted out of the young generation on large inputs
 * (1 MiB of `- ***` grew 19 times its 100 KiB time, a third of it collection). Past
 * `MAX_PIECE_LENGTH` it is flattened and a new one begins, after an empty inline slot.
 */
function cutLongLastPiece (items: RenderedItems): void {
  const html = items.html.at(-1)!
  const tight = items.tight.at(-1)!
  if (html.length < MAX_PIECE_LENGTH && tight.length < MAX_PIECE_LENGTH) return
  flattened(html)
  flattened(tight)
  items.html.push('')
  items.tight.push('')
  items.inline.push('')
}

/**
 * Calls `renderFinishedItem` after each list item's content: markdown-it's list rule parses it
 * with `md.block.tokenize` while `parentType` is `'list'`, and no other rule does. An empty item
 * followed by an empty line is never parsed this way, and stays as tokens.
 */
function renderItemsWhenFinished (md: MarkdownIt): void {
  const tokenize = md.block.tokenize.bind(md.block)
  md.block.tokenize = (state, startLine, endLine) => {
    const first = state.tokens.length
    tokenize(state, startLine, endLine)
    if (state.parentType === 'list' && rendersEagerly(state)) renderFinishedItem(state, first)
  }
}

/**
 * Continues `pieces` with `between` and then `more`, the first of `more` joining the last of
 * `pieces`. The last piece grows for as long as items bring no inline content (`- ***` lines), so
 * it is flattened only once complete, when an inline slot follows it or it is cut: flattening it
 * at every item copied it every time, quadratic in the run's length (100 KiB of `- >` lines took
 * 32 s).
 */
function appendPieces (pieces: string[], between: string, more: string[]): void {
  const last = pieces.length - 1
  pieces[last] = pieces[last]! + between + more[0]!
  if (more.length === 1) return
  flattened(pieces[last]!)
  for (let index = 1; index < more.length; index++) pieces.push(more[index]!)
}

const SPACE = 0x20
const TILDE = 0x7e

/**
 * Inline rule before markdown-it's strikethrough. A run of three or more tildes is text, as in
 * GitHub's spec (`This will ~~~not~~~ strike.`, example 493 of GFM 0.29), where markdown-it
 * would cut it into `~~` pairs and strike with them; taking the run whole also keeps a long run
 * from becoming one token and one delimiter per pair. A `~~` past MAX_STRIKETHROUGH_MARKERS is
 * text too; within it, markdown-it's rule takes it.
 */
function tildesAsText (state: StateInline, silent: boolean): boolean {
  const start = state.pos
  if (state.src.charCodeAt(start) !== TILDE) return false
  let end = start
  while (end < state.posMax && state.src.charCodeAt(end) === TILDE) end++
  if (end - start < 2) return false
  const budget = state.env as RenderState
  if (end - start === 2 && budget.strikethroughMarkersLeft > 0) {
    if (!silent) budget.strikethroughMarkersLeft--
    return false
  }
  if (!silent) state.pending += state.src.slice(start, end)
  state.pos = end
  return true
}

const NUL = 0x00
const LF = 0x0a
const CR = 0x0d
const REPLACEMENT_CHARACTER = 0xfffd
/** Code units per String.fromCharCode call, well within any engine's argument limit. */
const CODE_UNITS_PER_CALL = 8192

/**
 * Core rule in place of markdown-it's `normalize`, with the same result: CR and CRLF become LF,
 * NUL becomes U+FFFD. markdown-it does it with two global regular-expression replaces, the
 * first of which also matches every LF; on 1 MiB of short lines or NULs that costs ~20 times
 * the 100 KiB time. This is one pass over the code units, and none when there is nothing to do.
 */
function normalizeLineEndingsAndNul (state: StateCore): void {
  const source = state.src
  if (!source.includes('\r') && !source.includes('\0')) return
  const units = new Uint16Array(source.length)
  let length = 0
  for (let index = 0; index < source.length; index++) {
    const unit = source.charCodeAt(index)
    if (unit === CR) {
      units[length++] = LF
      if (source.charCodeAt(index + 1) === LF) index++
    } else {
      units[length++] = unit === NUL ? REPLACEMENT_CHARACTER : unit
    }
  }
  const parts: string[] = []
  for (let start = 0; start < length; start += CODE_UNITS_PER_CALL) {
    parts.push(String.fromCharCode(...units.subarray(start, Math.min(start + CODE_UNITS_PER_CALL, length))))
  }
  state.src = parts.join('')
}

const BACKSLASH = 0x5c
/** ASCII punctuation: what a backslash escapes (CommonMark, section 2.4). */
const ESCAPABLE = new Set(Array.from('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', (character) => character.charCodeAt(0)))

/**
 * Inline rule in place of markdown-it's `escape`: an escaped character joins the pending text,
 * where markdown-it makes it a `text_special` token (which only typographer and linkify, both
 * off here, tell apart) and so also flushes the text before it into a token of its own. Two
 * tokens per escape made 1 MiB of `` ``\ `` take over 20 times the 100 KiB time. The HTML is the
 * same but in image alt text, which now keeps escaped characters as CommonMark says (markdown-it's
 * renderer skips `text_special` there; see also `joinText`). A backslash before a line ending is a
 * hard break, and an escaped tilde a `text_special` token, both left to markdown-it's rule.
 */
function escapeAsText (original: InlineRule): InlineRule {
  return (state, silent) => {
    const { src, posMax } = state
    let pos = state.pos
    if (src.charCodeAt(pos) !== BACKSLASH || pos + 1 >= posMax) return false
    pos++
    const escaped = src.charCodeAt(pos)
    // An escaped tilde stays a token of its own: markdown-it's strikethrough takes a text token that
    // is exactly `~` just before a closing `~~` for the odd marker of a run, and moves it out.
    if (escaped === LF || escaped === TILDE) return original(state, silent)
    if (escaped === SPACE) {
      // A literal backslash; the space stays, so that the newline rule still sees a two-space hard break.
      if (!silent) state.pending += '\\'
      state.pos = pos
      return true
    }
    let end = pos + 1
    if (escaped >= 0xd800 && escaped <= 0xdbff && end < posMax) {
      const low = src.charCodeAt(end)
      if (low >= 0xdc00 && low <= 0xdfff) end++
    }
    if (!silent) state.pending += ESCAPABLE.has(escaped) ? src.slice(pos, end) : src.slice(pos - 1, end)
    state.pos = end
    return true
  }
}

const TAB = 0x09

/**
 * Inline rule in place of markdown-it's `newline` for a soft line break: the line ending joins
 * the pending text, where markdown-it makes the text before it a token and the break a
 * `softbreak` token, which renders as the same "\n". Two tokens a line made 1 MiB of one-letter
 * lines mostly garbage collection. A line ending after a space (a hard break's, or one space to
 * drop) is left to markdown-it's rule: the pending text then ends with that space too, as every
 * other rule that adds to it adds the source up to its new position, or its last character
 * (entities and code spans make tokens).
 */
function softBreakAsText (original: InlineRule): InlineRule {
  return (state, silent) => {
    const { src, pos, posMax } = state
    if (src.charCodeAt(pos) !== LF) return false
    if (silent || src.charCodeAt(pos - 1) === SPACE) return original(state, silent)
    state.pending += '\n'
    let next = pos + 1
    while (next < posMax && (src.charCodeAt(next) === SPACE || src.charCodeAt(next) === TAB)) next++
    state.pos = next
    return true
  }
}

/** Characters at which one of this renderer's inline rules may start (autolink and raw HTML at `<`). */
const INLINE_RULE_STARTS = new Set(Array.from('\n!&*<[\\_`~', (character) => character.charCodeAt(0)))

/**
 * Last inline rule: the text no rule before it took, up to the next character where a rule may
 * start. markdown-it adds such text one character at a time (`]`, `#`, `:` …), one string
 * concatenation each, which on 1 MiB of `a]` left a million intermediate strings for the
 * collector. Not in silent mode: there a link label is being scanned, and each `]` counts.
 */
function plainTextRun (state: StateInline, silent: boolean): boolean {
  if (silent) return false
  const { src, posMax } = state
  let end = state.pos + 1
  while (end < posMax && !INLINE_RULE_STARTS.has(src.charCodeAt(end))) end++
  state.pending += src.slice(state.pos, end)
  state.pos = end
  return true
}

const LINK_ATTRIBUTES = new Set(['href', 'src', 'title'])

/**
 * Once links and images have copied `charsLeft` characters, the rest keep only their text.
 * Returns what is left for the next block's.
 */
function limitLinkAttributes (children: Token[], charsLeft: number): number {
  for (const token of children) {
    if ((token.type !== 'link_open' && token.type !== 'image') || token.attrs === null) continue
    for (const [name, value] of token.attrs) {
      if (LINK_ATTRIBUTES.has(name)) charsLeft -= value.length
    }
    if (charsLeft < 0) token.attrs = token.attrs.filter(([name]) => !LINK_ATTRIBUTES.has(name))
  }
  return charsLeft
}

/**
 * markdown-it's `text_join`: escapes and entities (`text_special`) become text, merged with their
 * neighbours. Unlike markdown-it's, also in an image's description, whose renderer skips
 * `text_special`: `![a&amp;b](u)` has `alt="a&amp;b"` as CommonMark says, where markdown-it
 * gives `alt="ab"`.
 */
function joinText (children: Token[]): void {
  let kept = 0
  for (let index = 0; index < children.length; index++) {
    const token = children[index]!
    if (token.type === 'text_special') token.type = 'text'
    if (token.type === 'image' && token.children !== null) joinText(token.children)
    const next = children[index + 1]
    if (token.type === 'text' && next !== undefined && (next.type === 'text' || next.type === 'text_special')) {
      next.content = token.content + next.content
    } else {
      children[kept++] = token
    }
  }
  children.length = kept
}

/**
 * Core rule in place of markdown-it's `inline` and `text_join`: each block's inline content is
 * parsed, finished and rendered before the next block's, and only its HTML is kept, in place of
 * its source: an inline token's content, or a rendered container's inline slot (see
 * `renderBlocks`). markdown-it keeps every block's inline tokens until the whole document is
 * rendered. The HTML is the same: references are all known once the blocks are parsed.
 */
function renderInlineAtOnce (state: StateCore): void {
  const { md, env } = state
  const budget = env as RenderState
  let linkAttributeCharsLeft = state.src.length * LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR
  const render = (source: string): string => {
    const children: Token[] = []
    md.inline.parse(source, md, env, children)
    linkAttributeCharsLeft = limitLinkAttributes(children, linkAttributeCharsLeft)
    joinText(children)
    return md.renderer.renderInline(children, md.options, env)
  }
  for (const token of state.tokens) {
    if (token.type === 'inline') {
      token.content = render(token.content)
      token.children = null
    } else if (token.type === RENDERED_CONTAINER) {
      const { inline } = token.meta as RenderedBlocks
      for (let slot = 0; slot < inline.length; slot++) inline[slot] = render(inline[slot]!)
    }
  }
}

/**
 * markdown-it's `Renderer#render`, but an inline token's content is its HTML already (see
 * `renderInlineAtOnce`), and a finished list's or block quote's HTML is ready but for the newline
 * before its opening tag that `renderBlockTokens` leaves to this render.
 */
function renderBlocks (this: Renderer, tokens: Token[], options: Options, env: unknown): string {
  let html = ''
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!
    if (token.type === 'inline') {
      html += token.content
    } else if (token.type === RENDERED_CONTAINER) {
      const container = token.meta as RenderedBlocks
      html += newlineAfterHiddenParagraph(tokens, index) + container.html[0]!
      for (let slot = 0; slot < container.inline.length; slot++) html += container.inline[slot]! + container.html[slot + 1]!
    } else {
      html += renderBlockToken(this, tokens, index, options, env)
    }
  }
  return html
}

/** Inline sources from this length on cache token ends in an array (see `cacheTokenEndsInArray`). */
export const LONG_INLINE_SOURCE = 16_384

/**
 * markdown-it's `ParserInline#skipToken` (link labels call it at each token inside them), with
 * its cache of where the token at each position ends in an Int32Array as long as the paragraph
 * (0: not known yet). In markdown-it's plain object, stores slowed as the paragraph grew: 1 µs
 * each at 200 KiB of `[r]: /u "title` lines, 4 µs at 1.6 MiB, 60% of the render; its cost per
 * KiB rose from 200 to 340 µs between 50 KiB and 1.6 MiB, and stays at about 110 with the array.
 * A Map was flat there, but its lookups made `[a[a[a…` grow from 620 to 820 µs per KiB; with
 * the array it costs about 300, against 520 with the object. Shorter sources keep markdown-it's
 * own: allocating the array made a 5 KB README render about 10% slower.
 */
function cacheTokenEndsInArray (original: ParserInline['skipToken']): ParserInline['skipToken'] {
  return function skipToken (this: ParserInline, state: StateInline): void {
    if (state.src.length < LONG_INLINE_SOURCE) {
      original.call(this, state)
      return
    }
    if (!(state.cache instanceof Int32Array)) state.cache = new Int32Array(state.src.length + 1)
    const tokenEnds = state.cache as Int32Array
    const start = state.pos
    const cachedEnd = tokenEnds[start]!
    if (cachedEnd !== 0) {
      state.pos = cachedEnd
      return
    }
    let ok = false
    if (state.level < MAX_NESTING) {
      for (const rule of this.ruler.getRules('')) {
        // The level counts nesting here, as in markdown-it: no token is created.
        state.level++
        ok = rule(state, true)
        state.level--
        if (ok) {
          if (state.pos <= start) throw new Error("inline rule didn't increment state.pos")
          break
        }
      }
    } else {
      // markdown-it's limit: past maxNesting the rest of the paragraph is one token.
      state.pos = state.posMax
    }
    if (!ok) state.pos++
    tokenEnds[start] = state.pos
  }
}

/**
 * URLs that markdown-it's `normalizeLink` gives back as they are but for its percent-encoding:
 * `http(s)://` with an ASCII host name (which punycode leaves alone) and a port, path, query or
 * fragment, or a path (not `//`), query or fragment alone; printable ASCII only (mdurl trims
 * whitespace). Its parse and format of them took 27 µs for the nine links of the bench's 5 KB
 * README, about a tenth of its render; a property test checks that both ways give the same.
 */
export const PLAIN_URL = /^(?:https?:\/\/([a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*)(?::[0-9]+)?(?:[/?#][\x21-\x7e]*)?|\/(?!\/)[\x21-\x7e]*|[?#][\x21-\x7e]*)$/i
/** mdurl drops a longer host name. */
const MAX_HOST_NAME_LENGTH = 255

/** `md.normalizeLink`, with a PLAIN_URL only percent-encoded. */
export function encodePlainUrlsOnly (md: MarkdownIt): void {
  const { normalizeLink } = md
  const { encode } = md.utils.lib.mdurl
  md.normalizeLink = (url) => {
    const plain = PLAIN_URL.exec(url)
    return plain !== null && (plain[1] ?? '').length <= MAX_HOST_NAME_LENGTH ? encode(url) : normalizeLink(url)
  }
}

function createRenderer (): MarkdownIt {
  // markdown-it reads maxNesting from its options; @types/markdown-it does not declare it.
  const options: Options & { maxNesting: number } = {
    html: false,
    linkify: false,
    typographer: false,
    maxNesting: MAX_NESTING
  }
  const md = new MarkdownIt('commonmark', options)
  md.enable(['table', 'strikethrough'])
  md.inline.ruler.before('strikethrough', 'tildes_as_text', tildesAsText)
  md.core.ruler.at('normalize', normalizeLineEndingsAndNul)
  wrapRule(md.inline.ruler, 'escape', escapeAsText)
  wrapRule(md.inline.ruler, 'newline', softBreakAsText)
  md.inline.ruler.push('plain_text_run', plainTextRun)
  md.inline.skipToken = cacheTokenEndsInArray(md.inline.skipToken)
  encodePlainUrlsOnly(md)
  md.validateLink = isSafeUrl
  wrapRule(md.block.ruler, 'blockquote', (original) => renderWhenFinished(limitBlockquoteDepth(refuseBeyondNesting(1)(original))))
  wrapRule(md.block.ruler, 'list', (original) => renderListWhenFinished(refuseBeyondNesting(2)(original)))
  renderItemsWhenFinished(md)
  wrapRule(md.block.ruler, 'table', limitTableCells)
  md.core.ruler.at('inline', renderInlineAtOnce)
  md.core.ruler.disable('text_join')
  md.renderer.render = renderBlocks
  return md
}

const renderer = createRenderer()

/** HTML for a Markdown source; `""` for `""`. Safe to insert into a web page as it is. */
export function renderSafeMarkdown (source: string): string {
  const budget: RenderState = { blockquoteDepth: 0, tableCellsLeft: MAX_TABLE_CELLS, strikethroughMarkersLeft: MAX_STRIKETHROUGH_MARKERS, openLists: [] }
  return renderer.render(source, budget)
}
