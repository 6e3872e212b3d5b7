import t from 'tap'
import fc from 'fast-check'
import { DEFAULT_MARKDOWN_FEATURES, featuresUsedBy, isSafeUrl, renderSafeMarkdown, renderWith, MAX_BLOCKQUOTE_DEPTH, MAX_NESTING, MAX_TABLE_CELLS, LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR } from '../../../lib/markdown/render.js'
import { hostileInputs, unsafeParts, browserScheme } from './hostile.js'
import { pathologicalCases, ESCAPED, PLAIN_README, README, README_WITH_HTML, README_WITH_MATH } from '../../support/markdown-corpus.js'

const render = renderSafeMarkdown

t.test('an empty source renders to an empty string', async (t) => {
  t.equal(render(''), '')
})

t.test('CommonMark basics render', async (t) => {
  t.equal(render('# Title'), '<h1 id="user-content-title">Title</h1>\n')
  t.equal(render('*a* **b** `c`'), '<p><em>a</em> <strong>b</strong> <code>c</code></p>\n')
  t.equal(render('1. one\n2. two'), '<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n')
  t.equal(render('```js\nx\n```'), '<pre><code class="language-js">x\n</code></pre>\n')
})

t.test('nothing beyond GitHub Flavored Markdown', async (t) => {
  t.equal(render('"quotes" -- (c)'), '<p>&quot;quotes&quot; -- (c)</p>\n', 'no typographer')
  t.equal(render('<b>bold</b>', ESCAPED), '<p>&lt;b&gt;bold&lt;/b&gt;</p>\n', 'raw HTML is text under MARKDOWN_RAW_HTML=escape')
  t.equal(render('<b>bold</b>'), '<p><b>bold</b></p>\n', 'and as GitHub renders it by default')
})

t.test('GitHub tables', async (t) => {
  await t.test('alignment', async (t) => {
    t.equal(render('| l | c | r | n |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |'),
      '<table>\n<thead>\n<tr>\n<th style="text-align:left">l</th>\n<th style="text-align:center">c</th>\n' +
      '<th style="text-align:right">r</th>\n<th>n</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n' +
      '<td style="text-align:left">1</td>\n<td style="text-align:center">2</td>\n' +
      '<td style="text-align:right">3</td>\n<td>4</td>\n</tr>\n</tbody>\n</table>\n')
  })
  await t.test('escaped pipes stay in their cell', async (t) => {
    t.equal(render('| a | b |\n|---|---|\n| x \\| y | `p \\| q` |'),
      '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n' +
      '<td>x | y</td>\n<td><code>p | q</code></td>\n</tr>\n</tbody>\n</table>\n')
  })
  await t.test('inline formatting in cells', async (t) => {
    t.match(render('| a |\n|---|\n| *em* **strong** ~~del~~ [l](/u) `c` |'),
      '<td><em>em</em> <strong>strong</strong> <s>del</s> <a href="/u">l</a> <code>c</code></td>')
  })
  await t.test('short rows are padded, long rows cut to the header', async (t) => {
    const html = render('| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |')
    t.equal(html.split('<td').length - 1, 4, 'two cells a row')
    t.match(html, '<td>1</td>\n<td></td>')
    t.notMatch(html, />3</)
  })
  await t.test('no pipes without outer pipes is still a table', async (t) => {
    t.match(render('a | b\n--|--\n1 | 2'), '<td>1</td>\n<td>2</td>')
  })
  await t.test('a table ends at a blank line or another block', async (t) => {
    t.match(render('| a |\n|---|\n| 1 |\n\npara'), '</table>\n<p>para</p>')
    t.match(render('| a |\n|---|\n| 1 |\n> quote'), '</table>\n<blockquote>')
    t.match(render('| a |\n|---|\n| 1 |\n# heading'), '</table>\n<h1 id="user-content-heading">heading</h1>')
    t.match(render('| a |\n|---|\n| 1 |\n```\ncode\n```'), '</table>\n<pre><code>code')
    t.match(render('| a |\n|---|\n| 1 |\n- item'), '</table>\n<ul>')
  })
  await t.test('a table interrupts a paragraph', async (t) => {
    t.match(render('para\n| a |\n|---|\n| 1 |'), /^<p>para<\/p>\n<table>/)
  })
  await t.test('a delimiter row that does not match the header is not a table', async (t) => {
    t.equal(render('| a | b |\n|---|\n| 1 | 2 |'), '<p>| a | b |\n|---|\n| 1 | 2 |</p>\n')
  })
  await t.test('a table inside a list item and a block quote', async (t) => {
    t.match(render('- | a |\n  |---|\n  | 1 |'), '<li>\n<table>')
    t.match(render('> | a |\n> |---|\n> | 1 |'), '<blockquote>\n<table>')
  })
})

t.test('strikethrough', async (t) => {
  t.equal(render('~~del~~'), '<p><s>del</s></p>\n')
  t.equal(render('~single~'), '<p>~single~</p>\n', 'one tilde is text')
  t.equal(render('~~~three~~~'), '<pre><code class="language-three~~~"></code></pre>\n', 'three at the start of a line open a fence')
  t.equal(render('a ~~b *c*~~ d'), '<p>a <s>b <em>c</em></s> d</p>\n')
  t.equal(render('~~unclosed'), '<p>~~unclosed</p>\n')
  t.equal(render('This will ~~~not~~~ strike.'), '<p>This will ~~~not~~~ strike.</p>\n', 'GFM example 493: three tildes are text')
  t.equal(render('a ~~~~b~~~~ c'), '<p>a ~~~~b~~~~ c</p>\n', 'four tildes neither open nor close')
  t.equal(render('~~a ~~~ b~~'), '<p><s>a ~~~ b</s></p>\n', 'a run of three inside a strikethrough is text')
  t.equal(render('*~~~*'), '<p><em>~~~</em></p>\n', 'a tilde run stays inside emphasis')
  t.equal(render('\\~~not~~'), '<p>~~not~~</p>\n', 'an escaped tilde opens nothing')
})

t.test('extended autolinks', async (t) => {
  t.equal(render('see https://example.com/a?b=c.'), '<p>see <a href="https://example.com/a?b=c">https://example.com/a?b=c</a>.</p>\n')
  t.equal(render('`www.example.com` and `a@b.co`'), '<p><code>www.example.com</code> and <code>a@b.co</code></p>\n', 'never in code spans')
  t.equal(render('[see www.example.com](/u)'), '<p><a href="/u">see www.example.com</a></p>\n', 'never inside another link')
  t.equal(render('<https://example.com>'), '<p><a href="https://example.com">https://example.com</a></p>\n', 'an autolink stays one link')
  t.equal(render('*www.example.com*'), '<p><em><a href="http://www.example.com">www.example.com</a></em></p>\n', 'inside emphasis')
  t.equal(render('xwww.example.com'), '<p>xwww.example.com</p>\n', 'www. only after a space or a delimiter')
  t.equal(render('xhttps://example.com'), '<p>xhttps://example.com</p>\n', 'a scheme only after a non-letter')
  t.equal(render('www.exa_mple.com'), '<p>www.exa_mple.com</p>\n', 'no underscore in the last two segments')
  t.equal(render('https://例え.jp'), '<p><a href="https://xn--r8jz45g.jp">https://例え.jp</a></p>\n', 'a host name in punycode in the href')
  t.equal(render('javascript://example.com'), '<p>javascript://example.com</p>\n', 'only http, https and ftp')
  t.equal(render('Visit WWW.Example.com or www.Example.com'), '<p>Visit WWW.Example.com or <a href="http://www.Example.com">www.Example.com</a></p>\n', 'www. in lower case only, as cmark-gfm compares it')
  t.match(render('| a |\n|---|\n| mail a.b@example.com |'), '<td>mail <a href="mailto:a.b@example.com">a.b@example.com</a></td>', 'in table cells')
  t.equal(render('*x* ftp://example.com/a, **y**'), '<p><em>x</em> <a href="ftp://example.com/a">ftp://example.com/a</a>, <strong>y</strong></p>\n', 'between other inline tokens')
})

t.test('task list items', async (t) => {
  t.equal(render('1. [x] done\n2. [ ] open'), '<ol>\n<li><input type="checkbox" checked="" disabled="" /> done</li>\n<li><input type="checkbox" disabled="" /> open</li>\n</ol>\n', 'in an ordered list')
  t.equal(render('> - [X] done'), '<blockquote>\n<ul>\n<li><input type="checkbox" checked="" disabled="" /> done</li>\n</ul>\n</blockquote>\n', 'in a block quote')
  t.equal(render('- [ ] a\n\n- [x] b'), '<ul>\n<li>\n<p><input type="checkbox" disabled="" /> a</p>\n</li>\n<li>\n<p><input type="checkbox" checked="" disabled="" /> b</p>\n</li>\n</ul>\n', 'in a loose list')
  t.equal(render('- [x]no space\n- a [x] b\n- [y] c\n\n[x] d'), '<ul>\n<li>[x]no space</li>\n<li>a [x] b</li>\n<li>[y] c</li>\n</ul>\n<p>[x] d</p>\n', 'only a marker and whitespace opening a list item')
})

t.test('the URL policy', async (t) => {
  const refused = [
    'javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)',
    '\u0001javascript:alert(1)', '\tjavascript:alert(1)', 'java\tscript:alert(1)', 'java\nscript:alert(1)',
    'java%09script:alert(1)', '%01javascript:alert(1)', 'javascript%3Aalert(1)', 'vbscript:msgbox(1)',
    'VBScript:x', 'file:///etc/passwd', 'FILE://host/share', 'data:text/html,<script>alert(1)</script>',
    'data:text/html;base64,PHNjcmlwdD4=', 'data:image/svg+xml,<svg onload=alert(1)>', 'DATA:image/svg+xml;base64,x',
    'data:image/png', 'data:,x'
  ]
  for (const url of refused) t.notOk(isSafeUrl(url), `refuses ${JSON.stringify(url)}`)
  const allowed = [
    'https://example.com', 'http://example.com/a?b=c', 'mailto:someone@example.com', '/relative/path',
    'relative', '#fragment', '?query', '//example.com/protocol-relative', 'irc://irc.example.com',
    'data:image/png;base64,iVBORw0KGgo=', 'data:image/gif;base64,R0lGOD', 'DATA:IMAGE/JPEG;base64,x',
    'data:image/webp,x', 'javascript', 'my-javascript:x', ''
  ]
  for (const url of allowed) t.ok(isSafeUrl(url), `allows ${JSON.stringify(url)}`)
})

t.test('the URL policy applies to every way of writing a link', async (t) => {
  t.equal(render('[a](javascript:alert(1))'), '<p>[a](javascript:alert(1))</p>\n', 'inline link')
  t.equal(render('![a](javascript:alert(1))'), '<p>![a](javascript:alert(1))</p>\n', 'image')
  t.equal(render('<javascript:alert(1)>'), '<p>&lt;javascript:alert(1)&gt;</p>\n', 'autolink')
  t.equal(render('[a]\n\n[a]: javascript:alert(1)'), '<p>[a]</p>\n<p>[a]: javascript:alert(1)</p>\n', 'reference definition')
  t.equal(render('[a](&#x6A;avascript:alert(1))'), '<p>[a](javascript:alert(1))</p>\n', 'entity in the scheme')
  t.equal(render('[a](java&#x09;script:alert(1))'), '<p>[a](java\tscript:alert(1))</p>\n', 'tab entity in the scheme')
})

t.test('safe links and images stay links and images', async (t) => {
  t.equal(render('[a](https://example.com "t")'), '<p><a href="https://example.com" title="t">a</a></p>\n')
  t.equal(render('<https://example.com>'), '<p><a href="https://example.com">https://example.com</a></p>\n')
  t.equal(render('<a@example.com>'), '<p><a href="mailto:a@example.com">a@example.com</a></p>\n')
  t.equal(render('![p](data:image/png;base64,iVBORw0KGgo=)'), '<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="p" /></p>\n')
  t.equal(render('[a][r]\n\n[r]: /u'), '<p><a href="/u">a</a></p>\n')
  t.equal(render('[a](/a b)'), '<p>[a](/a b)</p>\n', 'a space ends a destination (CommonMark)')
})

t.test('line endings and NUL are normalised as CommonMark says', async (t) => {
  t.equal(render('a\r\nb\rc\nd'), '<p>a\nb\nc\nd</p>\n', 'CRLF and CR are line endings')
  t.equal(render('a\r\r\nb'), '<p>a</p>\n<p>b</p>\n', 'CR then CRLF: two line endings, a blank line')
  t.equal(render('a\u0000b\u0000'), '<p>a\uFFFDb\uFFFD</p>\n', 'NUL is U+FFFD')
  t.equal(render('\uD800\u0000'), '<p>\uD800\uFFFD</p>\n', 'a lone surrogate is kept as it is')
})

t.test('escaped characters and entities stay in alt text, as CommonMark says', async (t) => {
  // markdown-it alone gives alt="a" and alt="abc": its renderer skips the text_special tokens of escapes and entities.
  t.equal(render('![\\[a\\]](b)'), '<p><img src="b" alt="[a]" /></p>\n')
  t.equal(render('![a&amp;b\\~c](u)'), '<p><img src="u" alt="a&amp;b~c" /></p>\n')
  t.equal(render('![![a\\*](u)](v)'), '<p><img src="v" alt="a*" /></p>\n', 'in a nested image too')
})

t.test('the hostile corpus renders to HTML that cannot run script', async (t) => {
  t.ok(hostileInputs.length >= 60, `${hostileInputs.length} hostile inputs`)
  for (const { name, markdown } of hostileInputs) {
    t.same(unsafeParts(render(markdown)), [], name)
    t.same(unsafeParts(render(markdown, ESCAPED)), [], `${name}, raw HTML escaped`)
  }
})

/** Pieces that matter to Markdown, HTML and URL parsing, for random documents. */
const FRAGMENTS = [
  '<', '>', '</', '/>', '[', ']', '(', ')', '![', '](', '`', '*', '_', '~~', '|', '-', '>', '#', '\n', '\n\n', ' ', '\t',
  ':', '"', "'", '&', ';', '\\', '\u0000', '\u0001', 'javascript', 'JaVa', 'script', 'vbscript', 'data', 'file',
  'text/html', 'image/svg+xml', 'image/png;base64,', '&#106;', '&#x09;', '&colon;', '&#58;', '%3A', '%09', '<script>',
  '<img src=x ', 'onerror=', 'onload=', 'alert(1)', 'href=', '<svg', '<a ', '<style>', '<!--', '-->', '<![CDATA[',
  '[r]: ', '[r]', 'http://x', 'mailto:', 'x', '[^', '[^r]', '[^r]: ', ']:', '> [!NOTE]\n', '[!TIP]', ':tada:', ':', '# ', '#r',
  '<div', '<details open ', 'ontoggle=', '<math>', '<mglyph>', '<noscript>', '</style>', '</p>', '<textarea>', '<title>',
  'srcset=', ' 2x,', '<source ', 'data-meridian-own=', 'class="markdown-alert" ', '<input ', 'formaction=', '<base ',
  'name=', 'id=', '- [x] ', '| a |\n|:-|\n', '=', '"'
]

t.test('random documents of hostile pieces render to HTML that cannot run script', async (t) => {
  const documents = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 60 }).map((pieces) => pieces.join(''))
  fc.assert(fc.property(documents, (markdown) => {
    const problems = unsafeParts(render(markdown))
    if (problems.length > 0) throw new Error(`${JSON.stringify(markdown)}: ${problems.join('; ')}`)
  }), { numRuns: 2000, seed: 20240501 })
  t.equal(unsafeParts(render(FRAGMENTS.join(''))).length, 0, 'all pieces at once')
})

t.test('the safety check itself finds what it looks for', async (t) => {
  const unsafe: Array<[string, RegExp]> = [
    ['<script>alert(1)</script>', /script-capable element <script>/],
    ['<p><img src="x" onerror="alert(1)"></p>', /event handler onerror/],
    ['<a href="&#106;avascript:alert(1)">a</a>', /dangerous URL in href/],
    ['<a href="java&#x09;script:alert(1)">a</a>', /dangerous URL in href/],
    ['<a href=" &#1;javascript:alert(1)">a</a>', /dangerous URL in href/],
    ['<img src="data:image/svg+xml,x">', /dangerous URL in src/],
    ['<svg><a href="x">a</a></svg>', /script-capable element <svg>/],
    ['<p style="background:url(x)">a</p>', /style/],
    ['<iframe srcdoc="x"></iframe>', /iframe/],
    ['<font>a</font>', /unexpected element <font>/],
    ['<img srcset="a.png 1x, javascript:alert(1) 2x">', /dangerous URL in srcset/],
    ['<a name="install"></a>', /name install without the user-content- prefix/],
    ['<h2 id="install">a</h2>', /id install without the user-content- prefix/],
    ['<sup><a href="#x" aria-describedby="footnote-label">1</a></sup>', /aria-describedby footnote-label without/],
    ['<div class="markdown-alert markdown-alert-x">a</div>', /class markdown-alert markdown-alert-x/]
  ]
  for (const [html, problem] of unsafe) t.match(unsafeParts(html).join('; '), problem, html)
  t.equal(browserScheme('\u0000 Java\tScript:x'), 'javascript')
  t.same(unsafeParts('<p><a href="https://example.com">a</a> <img src="data:image/png;base64,x" alt=""></p>'), [])
})

t.test('bounds', async (t) => {
  await t.test(`blocks nest at most ${MAX_NESTING} deep (markdown-it's maxNesting)`, async (t) => {
    const quotes = render('> '.repeat(MAX_NESTING + 10) + 'deep\n\nafter')
    t.ok(quotes.split('<blockquote>').length - 1 <= MAX_NESTING)
    t.match(quotes, /<p>after<\/p>\n$/, 'the document goes on after the deep container')
    const lists = render(Array.from({ length: MAX_NESTING }, (_, depth) => '  '.repeat(depth) + '- a').join('\n'))
    t.ok(lists.split('<ul>').length - 1 <= MAX_NESTING / 2)
  })
  await t.test(`block quotes nest at most ${MAX_BLOCKQUOTE_DEPTH} deep; deeper markers and lazy lines stay text`, async (t) => {
    const html = render('> '.repeat(MAX_NESTING) + 'a\n' + 'z\n'.repeat(100))
    t.equal(html.split('<blockquote>').length - 1, MAX_BLOCKQUOTE_DEPTH)
    t.match(html, '<p>' + '&gt; '.repeat(MAX_NESTING - MAX_BLOCKQUOTE_DEPTH) + 'a\n' + 'z\n'.repeat(99) + 'z</p>', 'every line in the deepest quote')
    t.equal(render('> '.repeat(MAX_BLOCKQUOTE_DEPTH) + 'a\n\nb'), '<blockquote>\n'.repeat(MAX_BLOCKQUOTE_DEPTH) + '<p>a</p>\n' + '</blockquote>\n'.repeat(MAX_BLOCKQUOTE_DEPTH) + '<p>b</p>\n', 'up to the bound, quotes as ever')
  })
  await t.test(`table cells are budgeted per document (${MAX_TABLE_CELLS})`, async (t) => {
    const table = '|' + 'a|'.repeat(256) + '\n|' + '-|'.repeat(256) + '\n' + 'x\n'.repeat(256) + '\n'
    const html = render(table.repeat(10))
    const tables = html.split('<table>').length - 1
    t.ok(tables >= 1 && tables < 10, `${tables} of 10 padded tables rendered as tables`)
    t.ok(html.split('<td').length - 1 <= MAX_TABLE_CELLS + 65_536)
    t.match(html, /<p>\|a\|a\|/, 'the rest are text')
  })
  await t.test('a reference used many times cannot blow up the output', async (t) => {
    const source = `[r]: /${'x'.repeat(10_000)} "${'t'.repeat(10_000)}"\n\n` + '[r]'.repeat(10_000)
    const html = render(source)
    t.ok(html.length < source.length * (LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR + 10), `output ${html.length} for input ${source.length}`)
    t.match(html, /^<p><a href="\/x+" title="t+">r<\/a>/, 'the first uses are links')
    t.match(html, /<a>r<\/a><\/p>\n$/, 'the last ones keep only their text')
    const imageSource = `[r]: /${'x'.repeat(10_000)}\n\n` + '![r]'.repeat(10_000)
    const images = render(imageSource)
    t.ok(images.length < imageSource.length * (LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR + 10), `output ${images.length} for input ${imageSource.length}`)
    t.match(images, /^<p><img src="\/x+" alt="r" \/>/, 'images are charged too: the first keep their source')
    t.match(images, /<img alt="r" \/><\/p>\n$/, 'the last ones keep only their alt text')
  })
  await t.test('ordinary documents are far from every budget', async (t) => {
    const links = Array.from({ length: 200 }, (_, i) => `[link ${i}](https://example.com/${i} "title ${i}")`).join('\n')
    t.equal(render(links).split('href=').length - 1, 200)
  })
})

t.test('pathological input at ~100 KB renders with the expected structure', async (t) => {
  for (const category of pathologicalCases) {
    const source = category.generate(100_000)
    t.ok(source.length <= 100_000 && source.length > 50_000, `${category.name}: input of ${source.length}`)
    const html = render(source)
    t.equal(category.check(html, source), null, category.name)
  }
})

t.test('a document renders with only the features it can use, to the same HTML as with all of them (issue #56)', async (t) => {
  const all = DEFAULT_MARKDOWN_FEATURES
  t.same(featuresUsedBy(PLAIN_README, all), { rawHtml: 'escape', highlight: false, math: false }, 'no $, fence or <: none of them')
  t.same(featuresUsedBy('costs $5', all), { rawHtml: 'escape', highlight: false, math: true }, 'a dollar: math')
  t.same(featuresUsedBy('```math\nx^2\n```', all), { rawHtml: 'escape', highlight: true, math: true }, 'a fence: highlighting and math fences')
  t.same(featuresUsedBy('a <b>', all), { rawHtml: 'github', highlight: false, math: false }, 'a <: raw HTML')
  t.equal(featuresUsedBy(README_WITH_MATH, all), all, 'a document that may use all of them gets the same features')
  t.same(featuresUsedBy('x', { rawHtml: 'escape', highlight: false, math: false }), { rawHtml: 'escape', highlight: false, math: false }, 'never more than asked')
  for (const [name, document] of Object.entries({ PLAIN_README, README, README_WITH_HTML, README_WITH_MATH, math: '```math\nx^2\n```', dollar: 'costs $5 and $x$' })) {
    t.equal(renderSafeMarkdown(document), renderWith(document, all), name)
  }
  // Documents without one of the three markers: the renderer without that feature must write what the full one writes.
  const withoutMarkers = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '*', '_', '`', '~', '$', '<', '>', '-', '#', '|', '[', ']', '(', ')', '!', '\\', '&', '1', '.') })
  fc.assert(fc.property(withoutMarkers, (document) => renderSafeMarkdown(document) === renderWith(document, all)), { numRuns: 2000 })
})
