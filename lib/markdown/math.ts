/** GitHub's math as MathML (KaTeX, `trust: false`); a `$` that reads as prose (`costs $5 and $10`) stays text. */
import katex from 'katex'
import type MarkdownIt from 'markdown-it'
import type { StateBlock, StateInline, Token } from 'markdown-it'
import { ownFragment } from './raw-html.js'

export const MAX_FORMULA_LENGTH = 8192
/** Deepest nesting of `{` rendered: KaTeX's parser recurses, and deep nesting overflows its stack. */
export const MAX_FORMULA_DEPTH = 64
/** Each formula counts at least FORMULA_FLOOR_CHARACTERS (docs/performance.md, "Highlighted code and math"). */
export const MATH_SOURCE_PER_DOCUMENT = 262_144
export const FORMULA_FLOOR_CHARACTERS = 16

const DOLLAR = 0x24
const BACKTICK = 0x60
const BACKSLASH = 0x5c

interface MathEnv {
  mathCharacters?: number
  /** Each formula's MathML (undefined: stays source), by `$` or `$$` and its TeX. */
  formulas?: Map<string, string | undefined>
}

const isSpace = (code: number): boolean => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39

function deeperThanAllowed (tex: string): boolean {
  let depth = 0
  for (let index = 0; index < tex.length; index++) {
    const code = tex.charCodeAt(index)
    if (code === BACKSLASH) index++
    else if (code === 0x7b && ++depth > MAX_FORMULA_DEPTH) return true
    else if (code === 0x7d) depth--
  }
  return false
}

/** The formula's MathML, or undefined when it stays source (it does not parse, or it is past a bound). */
export function mathml (tex: string, displayMode: boolean, env: object): string | undefined {
  if (tex.length > MAX_FORMULA_LENGTH || deeperThanAllowed(tex)) return undefined
  const spent = env as MathEnv
  const counted = (spent.mathCharacters ?? 0) + Math.max(tex.length, FORMULA_FLOOR_CHARACTERS)
  if (counted > MATH_SOURCE_PER_DOCUMENT) return undefined
  spent.mathCharacters = counted
  try {
    const html = katex.renderToString(tex, {
      output: 'mathml',
      displayMode,
      throwOnError: true,
      trust: false,
      strict: 'ignore',
      maxExpand: 1000,
      maxSize: 20,
      globalGroup: false
    })
    // Without KaTeX's `<span class="katex">` wrappers: the sanitizer (raw-html.ts's ownFragment) sees to the rest.
    return html.slice(html.indexOf('<math'), html.lastIndexOf('</math>') + '</math>'.length)
  } catch {
    return undefined
  }
}

/** `src`'s code spans up to `end`, [start, end) in order, found as CommonMark finds them, in linear time. */
function codeSpans (src: string, end: number): Array<[number, number]> {
  const runs: Array<{ at: number, length: number }> = []
  for (let index = src.indexOf('`'); index !== -1 && index < end;) {
    let after = index
    while (after < end && src.charCodeAt(after) === BACKTICK) after++
    runs.push({ at: index, length: after - index })
    index = src.indexOf('`', after)
  }
  const byLength = new Map<number, number[]>()
  runs.forEach((run, order) => {
    const orders = byLength.get(run.length)
    if (orders === undefined) byLength.set(run.length, [order])
    else orders.push(order)
  })
  const nextOfLength = new Map<number, number>()
  const spans: Array<[number, number]> = []
  for (let order = 0; order < runs.length; order++) {
    const { at, length } = runs[order]!
    const sameLength = byLength.get(length)!
    let next = nextOfLength.get(length) ?? 0
    while (next < sameLength.length && sameLength[next]! <= order) next++
    nextOfLength.set(length, next)
    const closer = sameLength[next]
    if (closer === undefined) continue
    spans.push([at, runs[closer]!.at + length])
    order = closer
  }
  return spans
}

/** Per inline source: its code spans, and from where no closing `$` exists. */
const scanned = new WeakMap<StateInline, { posMax: number, spans: Array<[number, number]>, unclosedFrom: number }>()

/** The index of the first span that ends after `position`, by bisection: openers do not walk the spans before them. */
function firstSpanEndingAfter (spans: ReadonlyArray<[number, number]>, position: number): number {
  let low = 0
  let high = spans.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (spans[middle]![1] <= position + 1) low = middle + 1
    else high = middle
  }
  return low
}

/** The position of the `$` that closes an inline formula opened at `start`, or -1; never one inside a code span. */
function closingDollar (state: StateInline, start: number): number {
  const { src, posMax } = state
  let known = scanned.get(state)
  if (known?.posMax !== posMax) {
    known = { posMax, spans: codeSpans(src, posMax), unclosedFrom: posMax }
    scanned.set(state, known)
  }
  if (start >= known.unclosedFrom) return -1
  let span = firstSpanEndingAfter(known.spans, start)
  for (let index = start + 1; index < posMax; index++) {
    while (span < known.spans.length && known.spans[span]![1] <= index) span++
    const code = src.charCodeAt(index)
    if (known.spans[span] !== undefined && known.spans[span]![0] <= index) {
      index = known.spans[span]![1] - 1
    } else if (code === BACKSLASH) {
      index++
    } else if (code === DOLLAR && !isSpace(src.charCodeAt(index - 1)) && !isDigit(src.charCodeAt(index + 1))) {
      return index
    }
  }
  known.unclosedFrom = start
  return -1
}

/** A formula from the opening `$` to `end`; one KaTeX cannot read is no formula, and its dollars stay text. */
function formula (state: StateInline, silent: boolean, tex: string, display: boolean, end: number): boolean {
  const rendered = renderedOnce(state.env, tex, display)
  if (rendered === undefined) return false
  if (!silent) {
    const token = state.push('math_inline', 'math', 0)
    token.content = tex
    token.meta = { mathml: rendered }
  }
  // In silent mode too: markdown-it skips a link label's tokens by this rule's end, and fails past none.
  state.pos = end
  return true
}

/** A link label is scanned silently before it is parsed: each formula is rendered once a document. */
function renderedOnce (env: object, tex: string, display: boolean): string | undefined {
  const rendered = (env as MathEnv).formulas ??= new Map()
  const key = `${display ? '$$' : '$'}${tex}`
  if (!rendered.has(key)) rendered.set(key, mathml(tex, display, env))
  return rendered.get(key)
}

function inlineMath (state: StateInline, silent: boolean): boolean {
  const { src, pos, posMax } = state
  if (src.charCodeAt(pos) !== DOLLAR || pos + 1 >= posMax) return false
  const next = src.charCodeAt(pos + 1)
  if (next === BACKTICK) {
    const close = src.indexOf('`$', pos + 2)
    if (close === -1 || close + 2 > posMax || close === pos + 2) return false
    return formula(state, silent, src.slice(pos + 2, close), false, close + 2)
  }
  if (next === DOLLAR) {
    const close = src.indexOf('$$', pos + 2)
    if (close === -1 || close + 2 > posMax || close === pos + 2) return false
    return formula(state, silent, src.slice(pos + 2, close), true, close + 2)
  }
  if (isSpace(next)) return false
  const close = closingDollar(state, pos)
  if (close === -1) return false
  return formula(state, silent, src.slice(pos + 1, close), false, close + 1)
}

/** Per block range: no `$$` block closes from line `from` until `until`, so a run of openers stays linear. */
const unclosedBlockFrom = new WeakMap<StateBlock, { endLine: number, blkIndent: number, from: number, until: number }>()

function blockMath (state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  const start = state.bMarks[startLine]! + state.tShift[startLine]!
  const max = state.eMarks[startLine]!
  if (state.sCount[startLine]! - state.blkIndent >= 4 || !state.src.startsWith('$$', start)) return false
  const firstLine = state.src.slice(start + 2, max)
  let lastLine = startLine
  let content: string
  if (firstLine.trimEnd().endsWith('$$') && firstLine.trim().length > 2) {
    content = firstLine.trimEnd().slice(0, -2)
  } else {
    const known = unclosedBlockFrom.get(state)
    if (known?.endLine === endLine && known.blkIndent === state.blkIndent &&
      startLine >= known.from && startLine < known.until) return false
    let found = false
    while (++lastLine < endLine) {
      const lineStart = state.bMarks[lastLine]! + state.tShift[lastLine]!
      // A line indented less than the container it is in ends the container, and the search (as for fences).
      if (lineStart < state.eMarks[lastLine]! && state.sCount[lastLine]! < state.blkIndent) break
      if (state.src.slice(lineStart, state.eMarks[lastLine]).trimEnd().endsWith('$$')) {
        found = true
        break
      }
    }
    if (!found) {
      unclosedBlockFrom.set(state, { endLine, blkIndent: state.blkIndent, from: startLine, until: lastLine })
      return false
    }
    const body = state.getLines(startLine + 1, lastLine + 1, state.blkIndent, false).trimEnd()
    content = `${firstLine}\n${body.slice(0, -2)}`
  }
  if (silent) return true
  // A math fence by another name: render.ts's fence rule renders both, and a block that does not parse as either.
  const token: Token = state.push('fence', 'code', 0)
  token.block = true
  token.info = 'math'
  token.markup = '$$'
  token.content = content
  token.map = [startLine, lastLine + 1]
  state.line = lastLine + 1
  return true
}

export function githubMath (md: MarkdownIt): void {
  md.inline.ruler.before('escape', 'math_inline', inlineMath)
  md.block.ruler.before('fence', 'math_block', blockMath, { alt: ['paragraph', 'reference', 'blockquote', 'list'] })
  md.renderer.rules.math_inline = (tokens, index, _options, env) =>
    ownFragment(env, (tokens[index]!.meta as { mathml: string }).mathml)
}
