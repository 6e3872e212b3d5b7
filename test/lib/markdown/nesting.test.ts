import t, { type Test } from 'tap'
import fc from 'fast-check'
import { renderSafeMarkdown as render, MAX_BLOCKQUOTE_DEPTH, MAX_MARKDOWN_LENGTH, MAX_NESTING } from '../../../lib/markdown/render.js'
import { containerDepth, pathologicalCases, staircase } from '../../support/markdown-corpus.js'
import { wordsKept, wordsOf, wordsSeen } from './words.js'

/** A list nests its items' content two levels down (the list, the item): this deep, the content is just under maxNesting. */
const DEEPEST_LIST = MAX_NESTING / 2 - 1

/** Stands for a word in a template; `numbered` makes each one its own (`w0`, `w1` …), so that a lost or moved word shows. */
const WORD = '§'

function numbered (template: string): string {
  let next = 0
  return template.replaceAll(WORD, () => `w${next++}`)
}

/** The words a numbered document holds, list numbers and URLs left out. */
const wordsIn = (markdown: string): string[] => wordsOf(markdown).filter((word) => /^w\d+$/.test(word))

/** `staircase` with a word on each line. */
const wordStairs = (markers: readonly string[]): string => staircase(markers, markers.map(() => WORD))

function assertEveryWord (t: Test, markdown: string, name: string): string {
  const words = wordsIn(markdown)
  const html = render(markdown)
  const kept = wordsKept(words, html)
  t.equal(kept, words.length, `${name}: ${kept} of ${words.length} words kept` + (kept < words.length ? `, ${words[kept]} lost` : ''))
  return html
}

t.test("the issue's inputs keep every word", async (t) => {
  const bullets = numbered(wordStairs(Array(30).fill('- ')) + `\n${WORD} ${WORD}`)
  const ordered = numbered(wordStairs(Array(25).fill('1. ')) + `\n${WORD}`)
  const repeated = numbered(wordStairs(Array(22).fill('- ')).repeat(200) + `\n${WORD}`)
  for (const [name, markdown] of [['a bullet list 30 deep, then a paragraph', bullets], ['an ordered list 25 deep, then a paragraph', ordered], ['a list 22 deep, 200 times, then a paragraph', repeated]] as const) {
    const html = assertEveryWord(t, markdown, name)
    t.equal(containerDepth(html), DEEPEST_LIST, `${name}: lists ${DEEPEST_LIST} deep`)
    t.match(html, /<\/[uo]l>\n<p>w\d+(?: w\d+)?<\/p>\n$/, `${name}: the paragraph after it`)
  }
})

t.test('up to the bound lists nest as ever; one deeper, the line is text in the deepest item', async (t) => {
  const atTheBound = render(numbered(wordStairs(Array(DEEPEST_LIST).fill('- '))))
  t.equal(containerDepth(atTheBound), DEEPEST_LIST, `a list ${DEEPEST_LIST} deep is ${DEEPEST_LIST} lists`)
  t.notMatch(atTheBound, /- w/, 'no marker as text')
  const pastTheBound = render(numbered(wordStairs(Array(DEEPEST_LIST + 3).fill('- '))))
  t.equal(containerDepth(pastTheBound), DEEPEST_LIST, `a list ${DEEPEST_LIST + 3} deep is ${DEEPEST_LIST} lists`)
  t.match(pastTheBound, `<li>w${DEEPEST_LIST - 1}\n- w${DEEPEST_LIST}\n- w${DEEPEST_LIST + 1}\n- w${DEEPEST_LIST + 2}</li>`, 'the deeper lines, markers and all')
  t.match(render(staircase(Array(DEEPEST_LIST + 3).fill('- ')) + '- back\n  - again'), /<\/ul>\n<\/li>\n<li>back\n<ul>\n<li>again<\/li>\n<\/ul>\n<\/li>\n<\/ul>\n$/,
    'a shallower item after them is an item again')
  // A block quote nests its content one level down: under the deepest quotes, fewer lists fit.
  const listsInQuotes = Math.floor((MAX_NESTING - 1 - MAX_BLOCKQUOTE_DEPTH) / 2)
  const quoted = render('> '.repeat(MAX_BLOCKQUOTE_DEPTH) + '- '.repeat(DEEPEST_LIST) + 'a\n\nb')
  t.equal(containerDepth(quoted), MAX_BLOCKQUOTE_DEPTH + listsInQuotes, 'block quotes count against the same bound')
  t.match(quoted, `<li>${'- '.repeat(DEEPEST_LIST - listsInQuotes)}a</li>`, 'the lists that do not fit are text')
  t.match(quoted, /<\/blockquote>\n<p>b<\/p>\n$/, 'and the document goes on after them')
})

/** Each kind of nesting far past every bound, and mixtures of them. */
const FAR_PAST_EVERY_BOUND: Record<string, string> = {
  'block quotes 40 deep, then a paragraph': '> '.repeat(40) + `${WORD}\n\n${WORD}`,
  'lists 40 deep on one line, then a paragraph': '- '.repeat(40) + `${WORD}\n\n${WORD}`,
  'ordered lists 40 deep, then a paragraph': wordStairs(Array(40).fill('1. ')) + `\n${WORD}`,
  'links nested 40 deep': `[${WORD} `.repeat(40) + WORD + ` ${WORD}](u)`.repeat(40),
  'images nested 40 deep': `![${WORD} `.repeat(40) + WORD + ` ${WORD}](u)`.repeat(40),
  'emphasis nested 1,000 deep': `*${WORD} `.repeat(1000) + WORD + ` ${WORD}*`.repeat(1000),
  'strong emphasis and strikethrough nested 200 deep': `**${WORD} ~~${WORD} `.repeat(100) + WORD + ` ${WORD}~~ ${WORD}**`.repeat(100),
  'lists and block quotes in turn 60 deep, emphasis and links 40 deep on every line':
    wordStairs(Array.from({ length: 60 }, (_, depth) => ['- ', '> ', '1. ', '* '][depth % 4]!))
      .replaceAll(WORD, `*${WORD} [${WORD} `.repeat(20) + WORD + ` ${WORD}](u) ${WORD}*`.repeat(20)) + `\n${WORD}`,
  'a block quote in every list item, 30 deep, repeated 20 times':
    wordStairs(Array.from({ length: 30 }, (_, depth) => depth % 2 === 0 ? '- ' : '> ')).repeat(20) + `\n${WORD}`,
  'an alert holding lists and block quotes 40 deep, then a paragraph':
    '> [!NOTE]\n' + wordStairs(Array.from({ length: 40 }, (_, depth) => ['- ', '> '][depth % 2]!)).replace(/^/gm, '> ') + `\n${WORD}`,
  // The definitions last, as the closing section puts them.
  'footnote definitions nested 40 deep, each referenced, holding lists 40 deep':
    Array.from({ length: 40 }, (_, depth) => `${WORD}[^n${depth}]`).join(' ') + `\n\n${WORD}\n\n` +
    Array.from({ length: 40 }, (_, depth) => `[^n${depth}]: `).join('') + '- '.repeat(40) + `${WORD}\n${WORD}`
}

t.test('far past every bound, every word survives', async (t) => {
  for (const [name, template] of Object.entries(FAR_PAST_EVERY_BOUND)) assertEveryWord(t, numbered(template), name)
})

/** The corpus's inputs that combine depth with length, each as long as a request may be. */
const DEPTH_WITH_LENGTH = pathologicalCases.filter(({ name }) => /repeated/.test(name) && /nested|deep/.test(name))

t.test('depth combined with length, at the 1 MiB limit: every word kept', async (t) => {
  t.ok(DEPTH_WITH_LENGTH.length >= 4, DEPTH_WITH_LENGTH.map(({ name }) => name).join('; '))
  for (const category of DEPTH_WITH_LENGTH) {
    const source = category.generate(MAX_MARKDOWN_LENGTH)
    t.equal(category.check(render(source), source), null, `${category.name}, ${source.length} characters`)
  }
})

const INLINE_WRAPPERS: ReadonlyArray<readonly [string, string]> = [['*', '*'], ['**', '**'], ['_', '_'], ['~~', '~~'], ['[', '](u)'], ['![', '](u)']]
const BLOCK_MARKERS = ['- ', '* ', '+ ', '1. ', '2) ', '> ']

/** Words wrapped in emphasis, strikethrough, links and images, up to 60 deep, some levels with words of their own. */
const inlineNesting = fc.array(fc.record({ wrapper: fc.constantFrom(...INLINE_WRAPPERS), withWords: fc.boolean() }), { maxLength: 60 })
  .map((levels) => levels.reduce((inner, { wrapper: [open, close], withWords }) => withWords ? `${open}${WORD} ${inner} ${WORD}${close}` : open + inner + close, WORD))
/** A line's text: a word first, so that no marker run at its start opens a fence or makes a rule. */
const lineText = fc.array(inlineNesting, { minLength: 1, maxLength: 3 }).map((parts) => `${WORD} ${parts.join(' ')}`)
/** A line opening up to 40 containers at once. */
const markerRun = fc.record({ indent: fc.nat(6), markers: fc.array(fc.constantFrom(...BLOCK_MARKERS), { maxLength: 40 }), text: lineText })
  .map(({ indent, markers, text }) => ' '.repeat(indent) + markers.join('') + text)
/** Up to 40 lines, each one container deeper than the last. */
const nestedLines = fc.array(fc.record({ marker: fc.constantFrom(...BLOCK_MARKERS), text: lineText }), { maxLength: 40 })
  .map((steps) => staircase(steps.map(({ marker }) => marker), steps.map(({ text }) => text)).replace(/\n$/, ''))
const documents = fc.array(fc.tuple(fc.oneof(markerRun, nestedLines), fc.constantFrom('\n', '\n\n')), { minLength: 1, maxLength: 6 })
  .map((blocks) => numbered(blocks.map(([block, end]) => block + end).join('') + WORD))

t.test('random nestings of lists, block quotes, links and emphasis far past the bounds keep every word, in order', async (t) => {
  const run = fc.check(fc.property(documents, (markdown) => {
    const words = wordsIn(markdown)
    const html = render(markdown)
    const kept = wordsKept(words, html)
    if (kept < words.length) throw new Error(`${words[kept]} lost from ${JSON.stringify(markdown)}: ${wordsSeen(html).join(' ')}`)
  }), { numRuns: 500, seed: 20260601 })
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'every word kept')
  t.equal(run.numRuns, 500, 'in each of 500 documents')
})
