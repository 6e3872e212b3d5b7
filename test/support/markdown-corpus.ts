/**
 * Markdown inputs shared by the tests and the benchmark: the pathological categories (after
 * cmark's test/pathological_tests.py and markdown-it's own), each with a structural check of its
 * output, and a ~5 KB README of the usual kind.
 */
import {
  DEFAULT_MARKDOWN_FEATURES, MAX_BLOCKQUOTE_DEPTH, MAX_FOOTNOTE_REFERENCES, MAX_NESTING, MAX_TABLE_CELLS, LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR,
  type MarkdownFeatures
} from '../../lib/markdown/render.js'
import { MAX_HTML_DEPTH } from '../../lib/markdown/github-html.js'
import { wordsKept, wordsOf } from '../lib/markdown/words.js'

/** The default features with raw HTML escaped (MARKDOWN_RAW_HTML=escape). */
export const ESCAPED: MarkdownFeatures = { ...DEFAULT_MARKDOWN_FEATURES, rawHtml: 'escape' }

export interface PathologicalCase {
  name: string
  /** An input of about `size` characters (never more). */
  generate: (size: number) => string
  /** Why the output of `generate(size)` is right; null when it is. */
  check: (html: string, source: string) => string | null
}

const count = (text: string, part: string): number => text.split(part).length - 1

/** `unit` repeated to fill `size`, after `prefix` and before `suffix`. */
function fill (size: number, unit: string, prefix = '', suffix = ''): string {
  return prefix + unit.repeat(Math.max(1, Math.floor((size - prefix.length - suffix.length) / unit.length))) + suffix
}
const repeats = (size: number, unitLength: number): number => Math.max(1, Math.floor(size / unitLength))

const expect = (ok: boolean, why: string): string | null => ok ? null : why

/** Opening tags of block quotes. */
const quotes = (html: string): number => count(html, '<blockquote>')

/** The greatest depth of nested containers (lists and block quotes) in the output. */
export function containerDepth (html: string): number {
  let depth = 0
  let deepest = 0
  for (const [tag] of html.matchAll(/<\/?(?:blockquote|ul|ol)>/g)) {
    depth += tag.startsWith('</') ? -1 : 1
    deepest = Math.max(deepest, depth)
  }
  return deepest
}

/** Whether the HTML shows every word of the source, in order: nothing left out, only markup changed. */
function everyWordKept (html: string, source: string): boolean {
  const words = wordsOf(source)
  return wordsKept(words, html) === words.length
}

/** Lines each nested one deeper than the last, by the markers given in turn, each with its text (`a` unless given). */
export function staircase (markers: readonly string[], texts: readonly string[] = []): string {
  let prefix = ''
  return markers.map((marker, index) => {
    const line = prefix + marker + (texts[index] ?? 'a') + '\n'
    prefix += marker === '> ' ? marker : ' '.repeat(marker.length)
    return line
  }).join('')
}

/** Lists this deep put the deepest items' content at maxNesting: the shallowest that markdown-it alone cuts short. */
const LIST_JUST_PAST_THE_BOUND = MAX_NESTING / 2

export const pathologicalCases: PathologicalCase[] = [
  {
    name: 'nested strong emphasis',
    generate: (size) => { const n = repeats(size, 14); return '*a **a '.repeat(n) + 'b' + ' a** a*'.repeat(n) },
    check: (html, source) => { const n = count(source, '*a **a '); return expect(count(html, '<em>') === n && count(html, '<strong>') === n, 'every pair nests') }
  },
  {
    name: 'emphasis run *…*a*…*',
    generate: (size) => { const n = repeats(size - 1, 2); return '*'.repeat(n) + 'a' + '*'.repeat(n) },
    check: (html) => expect(html.startsWith('<p>') && html.includes('a') && !html.includes('**a**'), 'one paragraph of matched pairs')
  },
  {
    name: 'emphasis closers without openers',
    generate: (size) => fill(size, 'a_ '),
    check: (html, source) => expect(!html.includes('<em>') && count(html, '_') === count(source, '_'), 'all underscores literal')
  },
  {
    name: 'emphasis openers without closers',
    generate: (size) => fill(size, '_a '),
    check: (html, source) => expect(!html.includes('<em>') && count(html, '_') === count(source, '_'), 'all underscores literal')
  },
  {
    name: 'unmatched delimiters *a **a',
    generate: (size) => fill(size, '*a **a '),
    check: (html, source) => expect(!html.includes('<em>') && count(html, '*') === count(source, '*'), 'all stars literal')
  },
  {
    name: 'mismatched openers and closers *a_',
    generate: (size) => fill(size, '*a_ '),
    check: (html) => expect(!html.includes('<em>'), 'no emphasis')
  },
  {
    name: 'openers and closers multiple of 3',
    generate: (size) => fill(size, 'c* ', 'a**b'),
    check: (html) => expect(!html.includes('<em>') && !html.includes('<strong>'), 'no emphasis')
  },
  {
    name: 'pattern **_*',
    generate: (size) => fill(size, '**_* '),
    check: (html, source) => expect(count(html, '<em>_</em>') === count(source, '**_*'), 'one emphasised underscore each')
  },
  {
    name: 'strikethrough openers ~~a',
    generate: (size) => fill(size, '~~a '),
    check: (html) => expect(!html.includes('<s>'), 'no strikethrough')
  },
  {
    name: 'tilde run',
    generate: (size) => fill(size, '~', 'x'),
    check: (html, source) => expect(count(html, '~') === count(source, '~'), 'all tildes literal')
  },
  {
    name: 'link openers [a',
    generate: (size) => fill(size, '[a'),
    check: (html, source) => expect(!html.includes('<a ') && count(html, '[') === count(source, '['), 'all brackets literal')
  },
  {
    name: 'link closers a]',
    generate: (size) => fill(size, 'a]'),
    check: (html, source) => expect(count(html, ']') === count(source, ']'), 'all brackets literal')
  },
  {
    name: 'nested brackets [[[a]]]',
    generate: (size) => { const n = repeats(size - 1, 2); return '['.repeat(n) + 'a' + ']'.repeat(n) },
    check: (html, source) => expect(count(html, '[') === count(source, '[') && !html.includes('<a '), 'all brackets literal')
  },
  {
    name: 'nested images ![![a](u)](u)',
    generate: (size) => { const n = repeats(size, 6); return '!['.repeat(n) + 'a' + '](u)'.repeat(n) },
    check: (html) => expect(count(html, '<img') <= 1, 'at most one image, the rest text')
  },
  {
    name: 'link openers and emphasis closers [ a_',
    generate: (size) => fill(size, '[ a_'),
    check: (html) => expect(!html.includes('<a ') && !html.includes('<em>'), 'all literal')
  },
  {
    name: 'pattern [ (]( repeated',
    generate: (size) => fill(size, '[ (]('),
    check: (html) => expect(!html.includes('<a '), 'no link')
  },
  {
    name: 'pattern ![[]() repeated',
    generate: (size) => fill(size, '![[]()'),
    check: (html, source) => expect(count(html, '<a href="">') === count(source, '![[]()'), 'one empty link each')
  },
  {
    name: 'pattern ]([ with newlines',
    generate: (size) => fill(size, ']([\n'),
    check: (html) => expect(!html.includes('<a '), 'no link')
  },
  {
    name: 'unclosed links [a](<b',
    generate: (size) => fill(size, '[a](<b'),
    check: (html, source) => expect(!html.includes('<a ') && count(html, '&lt;b') === count(source, '<b'), 'all literal')
  },
  {
    name: 'unclosed links [a](b',
    generate: (size) => fill(size, '[a](b'),
    check: (html) => expect(!html.includes('<a '), 'no link')
  },
  {
    name: 'unclosed code spans (backtick runs 1, 2, 3 …)',
    generate: (size) => { let text = ''; for (let n = 1; text.length + n + 1 <= size; n++) text += 'e' + '`'.repeat(n); return text },
    check: (html) => expect(/^<p>[e`]*<\/p>\n$/.test(html), 'one paragraph of literal backticks')
  },
  {
    name: 'backslash-backtick ``\\',
    generate: (size) => fill(size, '``\\'),
    check: (html) => expect(html.startsWith('<p>'), 'one paragraph')
  },
  {
    name: '< runs',
    generate: (size) => fill(size, '<', '', '>'),
    check: (html, source) => expect(count(html, '&lt;') === count(source, '<'), 'all escaped')
  },
  {
    name: 'unclosed autolinks <a',
    generate: (size) => fill(size, '<a'),
    check: (html, source) => expect(count(html, '&lt;a') === count(source, '<a'), 'all escaped')
  },
  {
    name: 'unclosed comments <!--',
    generate: (size) => fill(size, '<!--', '</'),
    check: (html, source) => expect(count(html, '&lt;!--') === count(source, '<!--'), 'all escaped')
  },
  {
    name: 'NUL characters',
    generate: (size) => fill(size, 'abc\u0000de\u0000'),
    check: (html, source) => expect(!html.includes('\u0000') && count(html, '\uFFFD') === count(source, '\u0000'), 'each NUL is U+FFFD')
  },
  {
    name: 'hard break after a long space run',
    generate: (size) => fill(size, ' ', 'x', 'x  \nx'),
    check: (html) => expect(count(html, '<br />') === 1, 'one hard break')
  },
  {
    name: 'nested block quotes > > >',
    generate: (size) => fill(size, '> ', '', 'a'),
    check: (html) => expect(quotes(html) === MAX_BLOCKQUOTE_DEPTH && html.includes('a</p>'), `quotes capped at ${MAX_BLOCKQUOTE_DEPTH}, the rest text`)
  },
  {
    name: 'lazy lines in the deepest block quote',
    generate: (size) => fill(size, 'z\n', '> '.repeat(MAX_NESTING) + 'a\n'),
    check: (html, source) => expect(quotes(html) <= MAX_BLOCKQUOTE_DEPTH && count(html, 'z') === count(source, 'z'), `quotes capped at ${MAX_BLOCKQUOTE_DEPTH}, no line left out`)
  },
  {
    name: 'emphasis in a deep block quote',
    generate: (size) => { const n = repeats(size, 3); return '>'.repeat(n) + 'a*'.repeat(n) },
    check: (html) => expect(quotes(html) <= MAX_BLOCKQUOTE_DEPTH, `quotes capped at ${MAX_BLOCKQUOTE_DEPTH}`)
  },
  {
    name: 'deeply nested lists',
    generate: (size) => { let text = ''; for (let depth = 0; ; depth++) { const line = '  '.repeat(depth) + '* a\n'; if (text.length + line.length > size) return text; text += line } },
    check: (html, source) => expect(containerDepth(html) <= MAX_NESTING / 2 && html.includes('<li>a') && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'sawtooth of nested lists',
    generate: (size) => { let text = ''; for (let i = 0; ; i++) { const line = '  '.repeat(i % 12) + '- a\n'; if (text.length + line.length > size) return text; text += line } },
    check: (html, source) => expect(containerDepth(html) <= MAX_NESTING / 2 && html.includes('<li>a') && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'a list nested just past the bound, repeated',
    generate: (size) => fill(size, staircase(Array(LIST_JUST_PAST_THE_BOUND).fill('- '))),
    check: (html, source) => expect(containerDepth(html) < LIST_JUST_PAST_THE_BOUND && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'a list nested 40 deep, repeated',
    generate: (size) => fill(size, staircase(Array(40).fill('- '))),
    check: (html, source) => expect(containerDepth(html) < LIST_JUST_PAST_THE_BOUND && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'lists and block quotes nested in turn 40 deep, repeated',
    generate: (size) => fill(size, staircase(Array.from({ length: 40 }, (_, depth) => ['- ', '> ', '+ '][depth % 3]!))),
    check: (html, source) => expect(containerDepth(html) < MAX_NESTING && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'empty lines in deeply nested lists',
    generate: (size) => { const n = repeats(size, 3); return '- '.repeat(n) + 'x' + '\n'.repeat(n) },
    check: (html, source) => expect(containerDepth(html) <= MAX_NESTING / 2 && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'empty lines in deeply nested lists in a block quote',
    generate: (size) => { const n = repeats(size - 4, 4); return '> ' + '- '.repeat(n) + 'x\n' + '>\n'.repeat(n) },
    check: (html, source) => expect(containerDepth(html) <= MAX_NESTING / 2 + 1 && everyWordKept(html, source), 'depth bounded, every word kept')
  },
  {
    name: 'many list items',
    generate: (size) => fill(size, '- a\n'),
    check: (html, source) => expect(count(html, '<li>') === count(source, '- a'), 'one item each')
  },
  {
    name: 'list items of rules - ***',
    generate: (size) => fill(size, '- ***\n'),
    check: (html, source) => expect(count(html, '<li>') === count(source, '- ***') && count(html, '<hr />') === count(source, '- ***'), 'a rule in each item')
  },
  {
    name: 'list items of empty block quotes - >',
    generate: (size) => fill(size, '- >\n'),
    check: (html, source) => expect(count(html, '<li>') === count(source, '- >') && count(html, '<blockquote>') === count(source, '- >'), 'a quote in each item')
  },
  {
    name: 'one-letter lines in one paragraph',
    generate: (size) => fill(size, 'b\n'),
    check: (html) => expect(count(html, '<p>') === 1, 'one paragraph')
  },
  {
    name: 'many reference definitions and uses',
    generate: (size) => {
      let definitions = ''
      let uses = ''
      for (let i = 0; ; i++) {
        const definition = `[r${i}]: /u${i}\n`
        const use = `[r${i}] `
        if (definitions.length + uses.length + definition.length + use.length + 1 > size) return `${definitions}\n${uses}`
        definitions += definition
        uses += use
      }
    },
    check: (html, source) => expect(count(html, '<a href="/u') === count(source, ']: /u'), 'every reference resolves')
  },
  {
    name: 'one long reference used many times',
    generate: (size) => fill(size, '[r]', `[r]: /${'x'.repeat(size / 2 - 10)}\n\n`),
    check: (html, source) => expect(html.length < source.length * (LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR + 20), 'output linear in the input')
  },
  {
    name: 'unclosed reference titles',
    generate: (size) => fill(size, '[r]: /u "title\n'),
    check: (html) => expect(html.startsWith('<p>'), 'text')
  },
  {
    name: 'very wide table',
    generate: (size) => { const n = repeats(size - 8, 8); return '|' + 'a|'.repeat(n) + '\n|' + '-|'.repeat(n) + '\n' + ('|' + 'b|'.repeat(n) + '\n').repeat(2) },
    check: (html, source) => expect(count(html, '<td>') === 2 * count(source.split('\n')[0] ?? '', 'a'), 'every cell')
  },
  {
    name: 'tables of short rows (padded cells)',
    generate: (size) => fill(size, '|' + 'a|'.repeat(256) + '\n|' + '-|'.repeat(256) + '\n' + 'x\n'.repeat(256) + '\n'),
    check: (html) => expect(count(html, '<td') <= MAX_TABLE_CELLS + 65_536 + 256, 'cells bounded per document')
  },
  {
    name: 'pipes that look like tables',
    generate: (size) => fill(size, 'a|b\n'),
    check: (html) => expect(!html.includes('<table>'), 'no table')
  },
  {
    name: 'www. runs www.a',
    generate: (size) => fill(size, 'www.a'),
    check: (html) => expect(count(html, '<a ') === 1, 'one link to the end')
  },
  {
    name: 'www. runs after underscores www.a_',
    generate: (size) => fill(size, 'www.a_'),
    check: (html) => expect(!html.includes('<a '), 'no link: an underscore in the last segments')
  },
  {
    name: 'spaced www. links',
    generate: (size) => fill(size, 'www.a '),
    check: (html, source) => expect(count(html, '<a href="http://www.a">') === count(source, 'www.a'), 'one link each')
  },
  {
    name: 'address openers a@a.',
    generate: (size) => fill(size, 'a@a.'),
    check: (html) => expect(count(html, '<a href="mailto:') === 0, 'no address')
  },
  {
    name: 'addresses a@a.a',
    generate: (size) => fill(size, 'a@a.a '),
    check: (html, source) => expect(count(html, '<a href="mailto:a@a.a">') === count(source, 'a@a.a'), 'one link each')
  },
  {
    name: 'URL followed by unbalanced parentheses',
    generate: (size) => fill(size, ')', 'http://a.b/('),
    check: (html) => expect(html.startsWith('<p><a href="http://a.b/()">http://a.b/()</a>))') && count(html, '<a ') === 1, 'one closing parenthesis in the link, the rest after it')
  },
  {
    name: 'URLs with unbalanced parentheses',
    generate: (size) => fill(size, 'http://a.b/) '),
    check: (html, source) => expect(count(html, '<a href="http://a.b/">') === count(source, 'http://a.b/)'), 'one link each, without its parenthesis')
  },
  {
    name: 'scheme runs http://',
    generate: (size) => fill(size, 'http://'),
    check: (html) => expect(count(html, '<a ') === 1, 'one link to the end')
  },
  {
    name: 'footnote reference openers [^ with a definition',
    generate: (size) => fill(size, '[^', '[^x]: y\n\n'),
    check: (html, source) => expect(!html.includes('<sup>') && count(html, '[^') === count(source, '[^') - 1, 'all literal')
  },
  {
    name: 'one footnote referenced everywhere',
    generate: (size) => fill(size, '[^a]', '[^a]: note\n\n'),
    check: (html, source) => expect(count(html, 'data-footnote-ref') === Math.min(MAX_FOOTNOTE_REFERENCES, count(source, '[^a]') - 1) &&
      count(html, '[^a]') === Math.max(0, count(source, '[^a]') - 1 - MAX_FOOTNOTE_REFERENCES), `at most ${MAX_FOOTNOTE_REFERENCES} references, the rest text`)
  },
  {
    name: 'many footnotes, each referenced once',
    generate: (size) => {
      let definitions = ''
      let uses = ''
      for (let i = 0; ; i++) {
        const definition = `[^${i}]: n\n`
        const use = `[^${i}]`
        if (definitions.length + uses.length + definition.length + use.length + 2 > size) return `${uses}\n\n${definitions}`
        definitions += definition
        uses += use
      }
    },
    check: (html, source) => expect(count(html, '<li id="user-content-fn-') === Math.min(MAX_FOOTNOTE_REFERENCES, count(source, ']:')), 'one list item each, within the budget')
  },
  {
    name: 'footnote definitions nested 40 deep, referenced, repeated',
    generate: (size) => fill(size, 'a[^d0]\n\n' + Array.from({ length: 40 }, (_, depth) => `[^d${depth}]: `).join('') + 'x\n\n'),
    check: (html, source) => expect(count(html, '<p>a<sup>') === count(source, 'a[^d0]') && html.endsWith('</section>\n'), 'every paragraph, one section')
  },
  {
    name: 'emoji shortcodes between escapes :tada:\\:',
    generate: (size) => fill(size, ':tada:\\:'),
    check: (html, source) => expect(count(html, '🎉') === count(source, ':tada:'), 'every shortcode an emoji')
  },
  {
    name: 'colon runs :::',
    generate: (size) => fill(size, ':'),
    check: (html, source) => expect(count(html, ':') === count(source, ':'), 'all colons literal')
  },
  {
    name: 'headings of one text # a',
    generate: (size) => fill(size, '# a\n'),
    check: (html, source) => expect(new Set(html.match(/id="[^"]*"/g)).size === count(source, '# a'), 'every id its own')
  },
  {
    name: 'headings named like the repeats of another',
    generate: (size) => { const n = repeats(size, 12); return Array.from({ length: n }, (_, i) => `# a-${i + 1}\n`).join('').slice(0, size / 2) + '# a\n'.repeat(size / 8) },
    check: (html) => { const ids = html.match(/id="[^"]*"/g) ?? []; return expect(new Set(ids).size === ids.length, 'every id its own') }
  },
  {
    name: 'alerts > [!NOTE]',
    generate: (size) => fill(size, '> [!NOTE]\n> a\n\n'),
    check: (html, source) => expect(count(html, 'markdown-alert-note') === count(source, '[!NOTE]'), 'one alert each')
  },
  {
    name: 'open fence to the end',
    generate: (size) => fill(size, 'a\n', '```\n'),
    check: (html) => expect(count(html, '<pre>') === 1, 'one code block')
  },
  // Raw HTML (issue #46): parsed whole and sanitized, its depth bounded.
  {
    name: 'raw HTML: nested <div>',
    generate: (size) => fill(size, '<div>'),
    check: (html, source) => expect(count(html, '<div>') === count(source, '<div>') && containerDepthOf(html, 'div') <= MAX_HTML_DEPTH, `every <div> kept, at most ${MAX_HTML_DEPTH} deep`)
  },
  {
    name: 'raw HTML: unclosed inline tags <i>x',
    generate: (size) => fill(size, '<i>x'),
    check: (html, source) => expect(count(html, 'x') === count(source, 'x') && containerDepthOf(html, 'i') <= MAX_HTML_DEPTH, 'every x kept, the <i> bounded')
  },
  {
    name: 'raw HTML: lists in unclosed <div>',
    generate: (size) => fill(size, '<div>\n\n- a\n\n'),
    check: (html, source) => expect(count(textOf(html), 'a') === count(source, '- a') && count(html, '<li>') === count(source, '- a'), 'every item kept, past the depth bound as items with their text after them')
  },
  {
    name: 'raw HTML: attributes <p a=b …>',
    generate: (size) => fill(size, 'a=b onclick=x ', '<p ', '>x</p>'),
    check: (html) => expect(html === '<p>x</p>', 'a paragraph, no attribute kept')
  },
  {
    name: 'raw HTML: unclosed <details> around Markdown',
    generate: (size) => fill(size, '<details><summary>s</summary>\n\n*a*\n\n'),
    check: (html, source) => expect(count(textOf(html), 'a') === count(source, '*a*') && count(html, '<em>') === count(source, '*a*'), 'every emphasis kept')
  },
  {
    name: 'code: one long word as JavaScript',
    generate: (size) => fill(size, 'a', '```js\n', '\n```'),
    check: (html, source) => expect(count(textOf(html), 'a') === count(source, 'a') && !html.includes('hljs-'), 'plain, every character kept')
  },
  {
    name: 'code: runs of $ as Java',
    generate: (size) => fill(size, '$'.repeat(200) + ' ', '```java\n', '\n```'),
    check: (html, source) => expect(count(html, '$') === count(source, '$') && !html.includes('hljs-'), 'plain, every character kept')
  },
  {
    name: 'code: blocks of JavaScript',
    generate: (size) => fill(size, '```js\nconst a = [1, 2].map((n) => n * 2) // x\n```\n\n'),
    check: (html, source) => expect(count(html, '<pre><code class="language-js">') === count(source, '```js') &&
      count(textOf(html).replaceAll('&gt;', '>'), 'map((n) => n * 2)') === count(source, '```js'), 'every block, its text kept')
  },
  {
    name: 'math: formulas $x^2$',
    generate: (size) => fill(size, '$x^2$ '),
    check: (html, source) => expect(count(html, '<msup>') + count(html, '$x^2$') === count(source, '$x^2$'), 'each a formula, or past the budget its source')
  },
  {
    name: 'math: fractions nested 1000 deep',
    generate: (size) => fill(size, '$' + '\\frac{'.repeat(1000) + 'x' + '}{y}'.repeat(1000) + '$\n\n'),
    check: (html, source) => expect(!html.includes('<math') && count(html, '\\frac{') === count(source, '\\frac{'), 'source, every fraction kept')
  },
  {
    name: 'math: macros that expand forever',
    generate: (size) => fill(size, '$\\def\\a{\\a\\a}\\a$ '),
    check: (html, source) => expect(!html.includes('<math') && count(html, '\\def') === count(source, '\\def'), 'source, each kept')
  },
  {
    name: 'math: openers without closers $a',
    generate: (size) => fill(size, '$a '),
    check: (html, source) => expect(!html.includes('<math') && count(html, '$') === count(source, '$'), 'all dollars literal')
  },
  {
    name: 'math: dollars and backticks $a `b',
    generate: (size) => fill(size, '$a `b '),
    check: (html, source) => expect(!html.includes('<math') && count(html, '$') === count(source, '$'), 'all dollars literal')
  },
  {
    name: 'math: code spans between openers `a` $b',
    generate: (size) => fill(size, '`a` $b '),
    check: (html, source) => expect(!html.includes('<math') && count(html, '<code>a</code>') === count(source, '`a`') && count(html, '$') === count(source, '$'), 'every span code, every dollar literal')
  },
  {
    name: 'math: $$ blocks that never close',
    generate: (size) => fill(size, '$$a\n\n'),
    check: (html, source) => expect(!html.includes('<math') && count(html, '$$') === count(source, '$$'), 'all dollars literal')
  }
]

/** HTML's text, its tags left out. */
const textOf = (html: string): string => html.replace(/<[^>]*>/g, '')

/** The greatest nesting of one element in HTML the renderer wrote. */
function containerDepthOf (html: string, tagName: string): number {
  let depth = 0
  let deepest = 0
  for (const [tag] of html.matchAll(new RegExp(`</?${tagName}>`, 'g'))) {
    depth += tag.startsWith('</') ? -1 : 1
    deepest = Math.max(deepest, depth)
  }
  return deepest
}

/** A ~5 KB README of the usual kind, for the 1 MiB figure and for throughput. */
export const README = `# Meridian

Meridian is a small HTTP/JSON service: token login, a paged user directory, sun event times
and **Markdown to HTML**. This document is a typical _README_ with [links](https://example.com/docs),
\`inline code\`, lists, a table, code blocks and a few ~~deleted~~ words.

## Quick start

1. Install the dependencies with \`npm ci\`.
2. Start the service with \`npm start\`; it listens on [localhost:3000](http://localhost:3000/).
3. Log in as the demo user and list users:

   \`\`\`sh
   curl -s -X POST localhost:3000/api/auth/login -d username=demo -d password=demo
   curl -s 'localhost:3000/api/user/list?access_token=…&page=2'
   \`\`\`

> **Note**: the demo users exist only outside production. See the
> [configuration](#configuration) section for the variables.

## Configuration

| Variable | Default | Meaning |
|:---------|:-------:|--------:|
| \`PORT\` | \`3000\` | listening port |
| \`HOST\` | \`127.0.0.1\` | listening address |
| \`DATABASE_URL\` | \`sqlite:data/meridian.db\` | embedded SQLite file |
| \`BODY_LIMIT\` | \`1048576\` | bytes |
| \`LOG_LEVEL\` | \`info\` | pino level |

## Endpoints

- \`POST /api/auth/login\`: form-encoded *username* and *password*; answers an access token,
  a refresh token and \`expires_in\`.
- \`POST /api/auth/refresh\`: a new access token for a refresh token.
- \`GET /api/user/list\`: the directory, twenty users a page, with \`meta\` and \`links\`.
- \`GET /api/date/suninfo\`: sunrise, sunset, transit and twilights for a day and a place.
- \`POST /api/markdown/parse\`: this very renderer.

### Markdown

The renderer follows CommonMark with GitHub tables and strikethrough. Raw HTML such as
\`<kbd>\` renders as on GitHub, and links like [this one](javascript:alert(1)) are
not links. Images work: ![logo](https://example.com/logo.png "Logo").

\`\`\`ts
import { renderSafeMarkdown } from './lib/markdown.js'

const html = renderSafeMarkdown('# Hello')
console.log(html) // <h1>Hello</h1>
\`\`\`

## Operations

* \`GET /health/live\` answers 200 while the process runs.
* \`GET /health/ready\` answers 200 when the database answers, else 503.
* \`GET /openapi.json\` is the OpenAPI document; \`GET /docs\` a page to try it.

Hard line breaks need two trailing spaces  
or a backslash\\
at the end of the line. Autolinks: <https://example.com/a?b=c&d=e> and <ops@example.com>.

---

## Design notes

The service is one Fastify instance built by a factory: the server, the CLI and every test
build it the same way. Each route's schema lists every status it can answer, so the OpenAPI
document is complete by construction. Errors always have the same body:
\`{"error": {"code": 404, "message": "Not found"}}\`.

Paging is by \`id\`; \`links\` holds page 1, the last page and every page within five of the
current one. Ages are computed at request time from the birth date, never stored. The sun
computation is a pure function of a timestamp, a latitude and a longitude, tested against the
U.S. Naval Observatory.

### Frequently asked

**Why JSON only for Markdown?** Because the request carries one string, and JSON is the one
body type every client has. *Why not HTML passthrough?* Because the output must be safe to
insert into any page without a second sanitiser.

**Is rendering fast?** It is linear in the input, pathological input included: deep nesting
is capped, table cells and repeated references are budgeted. See \`bench/markdown.ts\`.

1. First point with a [reference link][ref].
2. Second point with an image reference ![icon][img].
3. Third point, \`code\`, **strong**, _emphasis_ and ~~strike~~.

## Changelog

### 1.2.0

- **Added**: \`per_page\` on the user list, from 1 to 100; the links carry it.
- **Changed**: login throttling counts per username *and* per client address.
- **Fixed**: a refresh token of a removed user is refused (\`400 Invalid refresh token\`).

### 1.1.0

- Sun events at polar latitudes are \`null\` when they do not happen that day.
- The OpenAPI document names every schema once, under \`components\`.

| Version | Date | Highlights |
|---------|------|------------|
| 1.2.0 | 2024-05-02 | paging size, throttling per address |
| 1.1.0 | 2024-03-18 | polar days, OpenAPI components |
| 1.0.0 | 2024-01-09 | first release |

> Upgrading from 1.0 needs no migration: \`npx meridian migrate\` is a no-op on a current
> database, and safe to run while the server runs.

## Contributing

Run \`npm test\` before sending a change; it builds the app through the same factory as
production and runs every route through HTTP. \`npm run check\` type-checks the tests too.
Keep one job per module, names that explain themselves, and a comment only where the *why* is
not obvious. New endpoints need a schema with a stable \`$id\`, every status they can answer,
and a test in the mirrored path under \`test/\`. Benchmarks live in \`bench/\` and print figures;
they never fail a build.

[ref]: https://example.com/reference "Reference"
[img]: https://example.com/icon.png
`

/**
 * The README without its fences, raw HTML and autolinks (issue #56): headings, lists, quotes, tables and inline code, no dollar:
 * a document that needs none of highlighting, math or the sanitizer.
 */
export const PLAIN_README = README.replace(/^ *```[^]*?^ *```\n/gm, '').replace(/<([^<>\n]*)>/g, '$1').replaceAll('$', '')

/**
 * The README above as READMEs with raw HTML are written (issue #46): a centred logo for light and
 * dark mode, badges, a collapsible section, keys, an anchor, sub- and superscripts.
 */
export const README_WITH_HTML = `<p align="center">
  <picture>
    <source media="(prefers-color-scheme: dark)" srcset="https://example.com/logo-dark.png">
    <img src="https://example.com/logo.png" alt="Meridian" width="200">
  </picture>
</p>

<p align="center">
  <a href="https://example.com/ci"><img src="https://example.com/ci.svg" alt="CI"></a>
  <a href="https://example.com/npm"><img src="https://example.com/npm.svg" alt="npm" height="20"></a>
</p>

<a name="quick-start"></a>
` + README.replace('## ', `<details>
<summary><b>Table of contents</b></summary>

- [Quick start](#quick-start)
- [Keys](#keys)

</details>

## `) + `
<a name="keys"></a>
### Keys

Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop; H<sub>2</sub>O and x<sup>2</sup> render as on GitHub.<br>
<details open>
<summary>Advanced</summary>

Set \`LOG_LEVEL\` to <code>debug</code> for more.

</details>
`

/** The README with a section of formulas, as a technical README has them: inline, displayed and a math fence. */
export const README_WITH_MATH = README + `
## The sun's position

The hour angle of sunrise is $\\omega_0 = \\arccos(-\\tan\\varphi \\tan\\delta)$, where $\\varphi$ is the latitude
and $\\delta$ the Sun's declination. With the refraction and the Sun's radius the altitude is $h_0 = -0.833^\\circ$:

$$\\cos\\omega_0 = \\frac{\\sin h_0 - \\sin\\varphi \\sin\\delta}{\\cos\\varphi \\cos\\delta}$$

When $|\\cos\\omega_0| > 1$ the Sun never crosses $h_0$ that day: a polar day or night. Twilights use
$h = -6^\\circ$, $-12^\\circ$ and $-18^\\circ$. The equation of time, in minutes, is close to

\`\`\`math
E \\approx 9.87 \\sin 2B - 7.53 \\cos B - 1.5 \\sin B, \\qquad B = \\frac{360^\\circ}{365}(N - 81)
\`\`\`

and the transit is at $12 - \\lambda/15 - E/60$ hours UTC, for longitude $\\lambda$ in degrees. Prices are still
text: the service costs $0 to run and $5 to host.
`
