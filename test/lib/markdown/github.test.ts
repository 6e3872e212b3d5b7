import t from 'tap'
import { renderSafeMarkdown as render, MAX_FOOTNOTE_REFERENCES } from '../../../lib/markdown/render.js'
import { ESCAPED } from '../../support/markdown-corpus.js'
import { normalizeHtml } from '../../support/commonmark-normalize.js'

/** What GitHub renders beyond the GFM spec: footnotes, alerts, heading ids, in-document links, emoji. */

const ref = (id: string, number: number, use = 1): string =>
  `<sup><a href="#user-content-fn-${id}" id="user-content-fnref-${id}${use > 1 ? `-${use}` : ''}" data-footnote-ref="" aria-describedby="user-content-footnote-label">${number}</a></sup>`
const backref = (id: string, number: number, use = 1): string =>
  `<a href="#user-content-fnref-${id}${use > 1 ? `-${use}` : ''}" data-footnote-backref="" aria-label="Back to reference ${number}${use > 1 ? `-${use}` : ''}" class="data-footnote-backref">↩${use > 1 ? `<sup>${use}</sup>` : ''}</a>`
const SECTION_OPEN = '<section data-footnotes="" class="footnotes"><h2 id="user-content-footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n'
const SECTION_CLOSE = '</ol>\n</section>\n'

/**
 * micromark-extension-gfm-footnote's own fixtures (test/fixtures/*.md and .html), the HTML as
 * github.com serves it. Ours differs in one way on purpose: the section heading's id, and the
 * references that name it, carry the `user-content-` prefix like every other id.
 */
const MICROMARK_FIXTURES: Array<[string, string, string]> = [
  ['duplicate-calls', 'Call[^1][^1]\n\n[^1]: Recursion[^1][^1]\n',
    '<p>Call<sup><a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup><sup><a href="#user-content-fn-1" id="user-content-fnref-1-2" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup></p>\n<section data-footnotes="" class="footnotes"><h2 id="footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n<li id="user-content-fn-1">\n<p>Recursion<sup><a href="#user-content-fn-1" id="user-content-fnref-1-3" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup><sup><a href="#user-content-fn-1" id="user-content-fnref-1-4" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup> <a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1" class="data-footnote-backref">↩</a> <a href="#user-content-fnref-1-2" data-footnote-backref="" aria-label="Back to reference 1-2" class="data-footnote-backref">↩<sup>2</sup></a> <a href="#user-content-fnref-1-3" data-footnote-backref="" aria-label="Back to reference 1-3" class="data-footnote-backref">↩<sup>3</sup></a> <a href="#user-content-fnref-1-4" data-footnote-backref="" aria-label="Back to reference 1-4" class="data-footnote-backref">↩<sup>4</sup></a></p>\n</li>\n</ol>\n</section>\n'],
  ['duplicate-definitions', 'Call[^1]\n\n[^1]: a\n\n[^1]: b\n',
    '<p>Call<sup><a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup></p>\n<section data-footnotes="" class="footnotes"><h2 id="footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n<li id="user-content-fn-1">\n<p>a <a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1" class="data-footnote-backref">↩</a></p>\n</li>\n</ol>\n</section>\n'],
  ['nest', 'Note![^1][^2][^3][^4]\n\n- [^1]: Paragraph\n\n> [^2]: Paragraph\n\n[^3]: [^4]: Paragraph\n',
    '<p>Note!<sup><a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref="" aria-describedby="footnote-label">1</a></sup><sup><a href="#user-content-fn-2" id="user-content-fnref-2" data-footnote-ref="" aria-describedby="footnote-label">2</a></sup><sup><a href="#user-content-fn-3" id="user-content-fnref-3" data-footnote-ref="" aria-describedby="footnote-label">3</a></sup><sup><a href="#user-content-fn-4" id="user-content-fnref-4" data-footnote-ref="" aria-describedby="footnote-label">4</a></sup></p>\n<ul>\n<li></li>\n</ul>\n<blockquote>\n</blockquote>\n<section data-footnotes="" class="footnotes"><h2 id="footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n<li id="user-content-fn-1">\n<p>Paragraph <a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1" class="data-footnote-backref">↩</a></p>\n</li>\n<li id="user-content-fn-2">\n<p>Paragraph <a href="#user-content-fnref-2" data-footnote-backref="" aria-label="Back to reference 2" class="data-footnote-backref">↩</a></p>\n</li>\n<li id="user-content-fn-3">\n<a href="#user-content-fnref-3" data-footnote-backref="" aria-label="Back to reference 3" class="data-footnote-backref">↩</a>\n</li>\n<li id="user-content-fn-4">\n<p>Paragraph <a href="#user-content-fnref-4" data-footnote-backref="" aria-label="Back to reference 4" class="data-footnote-backref">↩</a></p>\n</li>\n</ol>\n</section>\n']
]

t.test("footnotes: micromark-extension-gfm-footnote's fixtures render as GitHub renders them", async (t) => {
  for (const [name, markdown, github] of MICROMARK_FIXTURES) {
    const expected = github.replaceAll('"footnote-label"', '"user-content-footnote-label"')
    t.equal(normalizeHtml(render(markdown)), normalizeHtml(expected), name)
  }
})

t.test('footnotes: numbered by first use, the list in that order, whatever the order of the definitions', async (t) => {
  t.equal(render('b[^b] a[^a] b again[^b]\n\n[^a]: A\n[^b]: B'),
    `<p>b${ref('b', 1)} a${ref('a', 2)} b again${ref('b', 1, 2)}</p>\n` + SECTION_OPEN +
    `<li id="user-content-fn-b">\n<p>B ${backref('b', 1)} ${backref('b', 1, 2)}</p>\n</li>\n` +
    `<li id="user-content-fn-a">\n<p>A ${backref('a', 2)}</p>\n</li>\n` + SECTION_CLOSE)
})

t.test('footnotes: a definition anywhere, of several paragraphs, a block quote and code', async (t) => {
  t.equal(render('[^long]: First paragraph.\n\n    > quoted\n\n    ```js\n    code()\n    ```\n\n    Last paragraph.\n\nText[^long]'),
    `<p>Text${ref('long', 1)}</p>\n` + SECTION_OPEN + '<li id="user-content-fn-long">\n<p>First paragraph.</p>\n' +
    '<blockquote>\n<p>quoted</p>\n</blockquote>\n<pre><code class="language-js"><span class="hljs-title function_">code</span>()\n</code></pre>\n' +
    `<p>Last paragraph. ${backref('long', 1)}</p>\n</li>\n` + SECTION_CLOSE)
  t.equal(render('a[^c]\n\n[^c]: x\n\n    ```\n    code\n    ```'),
    `<p>a${ref('c', 1)}</p>\n` + SECTION_OPEN + `<li id="user-content-fn-c">\n<p>x</p>\n<pre><code>code\n</code></pre>\n${backref('c', 1)}\n</li>\n` + SECTION_CLOSE,
    'after a last block that is no paragraph, the back-references stand on a line of their own')
})

t.test('footnotes: unreferenced definitions are left out, undefined references stay text', async (t) => {
  t.equal(render('a[^used]\n\n[^used]: kept\n[^unused]: left out'), `<p>a${ref('used', 1)}</p>\n` + SECTION_OPEN +
    `<li id="user-content-fn-used">\n<p>kept ${backref('used', 1)}</p>\n</li>\n` + SECTION_CLOSE)
  t.equal(render('no references\n\n[^unused]: left out'), '<p>no references</p>\n', 'no section without a reference')
  t.equal(render('a[^nowhere] b[^]\n\n[^x]: x'), '<p>a[^nowhere] b[^]</p>\n')
})

t.test("footnotes: labels by GitHub's grammar, matched whatever their case; no inline notes", async (t) => {
  t.match(render('a[^Note]\n\n[^NOTE]: n'), ref('note', 1), 'case-insensitive, the id in lower case')
  t.match(render('a[^Ünï]\n\n[^ünï]: n'), ref('%C3%BCn%C3%AF', 1), 'a non-ASCII label, percent-encoded in ids')
  t.equal(render('a[^a[b]\n\n[^a[b]: y'), '<p>a[^a[b]</p>\n<p>[^a[b]: y</p>\n', 'no brackets in a label')
  t.equal(render('a[^a b]\n\n[^a b]: x'), '<p>a<a href="x">^a b</a></p>\n', 'no whitespace: with one, a link reference, as on GitHub')
  t.equal(render(`a[^${'x'.repeat(1000)}]\n\n[^${'x'.repeat(1000)}]: y`), `<p>a[^${'x'.repeat(1000)}]</p>\n<p>[^${'x'.repeat(1000)}]: y</p>\n`, 'at most 999 characters')
  t.equal(render('a^[inline note]'), '<p>a^[inline note]</p>\n', 'no ^[inline notes], which GitHub does not have')
})

t.test('footnotes: a hostile label is encoded and escaped in every attribute', async (t) => {
  const html = render('a[^"><img/src=x/onerror=alert(1)>]\n\n[^"><img/src=x/onerror=alert(1)>]: b')
  t.notMatch(html, /<img/)
  t.match(html, 'href="#user-content-fn-%22%3E%3Cimg/src=x/onerror=alert(1)%3E"')
  t.match(html, '<li id="user-content-fn-%22%3E%3Cimg/src=x/onerror=alert(1)%3E">')
})

t.test(`footnotes: at most ${MAX_FOOTNOTE_REFERENCES} references a document; past them a reference stays text`, async (t) => {
  const html = render('[^a]: note\n\n' + '[^a]'.repeat(MAX_FOOTNOTE_REFERENCES + 3))
  t.equal(html.split('data-footnote-ref=""').length - 1, MAX_FOOTNOTE_REFERENCES)
  t.equal(html.split('data-footnote-backref=""').length - 1, MAX_FOOTNOTE_REFERENCES)
  t.match(html, /<\/sup>\[\^a\]\[\^a\]\[\^a\]<\/p>/, 'the last three as text')
})

const alert = (kind: string, title: string, content: string): string =>
  `<div class="markdown-alert markdown-alert-${kind}">\n<p class="markdown-alert-title">${title}</p>\n${content}</div>\n`

t.test('alerts: the five kinds, as GitHub renders them', async (t) => {
  t.equal(render('> [!NOTE]\n> Useful *information*.'), alert('note', 'Note', '<p>Useful <em>information</em>.</p>\n'))
  t.equal(render('> [!TIP]\n> One\n>\n> Two'), alert('tip', 'Tip', '<p>One</p>\n<p>Two</p>\n'))
  t.equal(render('> [!IMPORTANT]\n> - a\n> - b'), alert('important', 'Important', '<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n'))
  t.equal(render('> [!WARNING]  \n> w'), alert('warning', 'Warning', '<p>w</p>\n'), 'spaces after the marker')
  t.equal(render('> [!caution]\n> c'), alert('caution', 'Caution', '<p>c</p>\n'), 'a marker in lower case, the title as GitHub writes it')
  t.equal(render('> [!NOTE]\n> a\n\n> [!TIP]\n> b'), alert('note', 'Note', '<p>a</p>\n') + alert('tip', 'Tip', '<p>b</p>\n'), 'one after another')
})

t.test('alerts: anything else stays a block quote', async (t) => {
  t.equal(render('> [!HINT]\n> x'), '<blockquote>\n<p>[!HINT]\nx</p>\n</blockquote>\n', 'another word')
  t.equal(render('> [!NOTE] Title\n> x'), '<blockquote>\n<p>[!NOTE] Title\nx</p>\n</blockquote>\n', 'text after the marker')
  t.equal(render('> [!NOTE]'), '<blockquote>\n<p>[!NOTE]</p>\n</blockquote>\n', 'no content')
  t.equal(render('- > [!NOTE]\n  > x'), '<ul>\n<li>\n<blockquote>\n<p>[!NOTE]\nx</p>\n</blockquote>\n</li>\n</ul>\n', 'nested in another block')
  t.equal(render('> > [!NOTE]\n> > x'), '<blockquote>\n<blockquote>\n<p>[!NOTE]\nx</p>\n</blockquote>\n</blockquote>\n', 'nested in a block quote')
  t.equal(render('> x\n> [!NOTE]\n> y'), '<blockquote>\n<p>x\n[!NOTE]\ny</p>\n</blockquote>\n', 'not on the first line')
})

t.test("heading ids: GitHub's slugs, prefixed user-content-", async (t) => {
  t.equal(render('## Install'), '<h2 id="user-content-install">Install</h2>\n')
  t.equal(render('# Héllo, *World*! `a.b()`\n\nSetext & more\n---'),
    '<h1 id="user-content-héllo-world-ab">Héllo, <em>World</em>! <code>a.b()</code></h1>\n<h2 id="user-content-setext--more">Setext &amp; more</h2>\n',
    'lower case, punctuation and markup removed, spaces to hyphens, in setext headings too')
  t.equal(render('# a\n# a\n## a\n# a-1'),
    '<h1 id="user-content-a">a</h1>\n<h1 id="user-content-a-1">a</h1>\n<h2 id="user-content-a-2">a</h2>\n<h1 id="user-content-a-1-1">a-1</h1>\n', 'repeats numbered')
  t.equal(render('## :rocket: Launch'), '<h2 id="user-content-rocket-launch">🚀 Launch</h2>\n', 'an emoji shortcode counts as its name, as on GitHub')
  t.equal(render('# "><script>x</script>', ESCAPED), '<h1 id="user-content-scriptxscript">&quot;&gt;&lt;script&gt;x&lt;/script&gt;</h1>\n', 'hostile text: slugged and escaped')
  t.equal(render('# "><script>x</script>'), '<h1 id="user-content-scriptxscript">">&lt;script>x&lt;/script></h1>\n', 'by default too, the tagfilter showing the script tags as text')
  t.equal(render('## Press <kbd>Ctrl</kbd>'), '<h2 id="user-content-press-ctrl">Press <kbd>Ctrl</kbd></h2>\n', "raw HTML's text counts, not its tags")
  t.equal(render('# Footnote label\n\na[^1]\n\n[^1]: b').split('\n')[0], '<h1 id="user-content-footnote-label-1">Footnote label</h1>',
    "the footnotes' heading keeps its id")
})

t.test('in-document links point at the real ids', async (t) => {
  t.equal(render('# Install\n\n[go](#install) [case](#Install) [away](#nowhere) [site](https://example.com/#install)').split('\n')[1],
    '<p><a href="#user-content-install">go</a> <a href="#user-content-install">case</a> <a href="#nowhere">away</a> <a href="https://example.com/#install">site</a></p>')
  t.match(render('# Café\n\n[x](#café)'), '<a href="#user-content-caf%C3%A9">x</a>', 'a non-ASCII fragment, encoded')
  t.match(render('# Two\n# Two\n\n[x](#two-1)'), '<a href="#user-content-two-1">x</a>', 'a repeated heading')
  t.match(render('a[^n]\n\n[^n]: b\n\n[note](#fn-n) [back](#fnref-n) [list](#footnote-label)'),
    '<a href="#user-content-fn-n">note</a> <a href="#user-content-fnref-n">back</a> <a href="#user-content-footnote-label">list</a>', 'footnotes and their references')
  t.match(render('[x](#fn-n)\n\n[^n]: unreferenced'), '<a href="#fn-n">x</a>', 'a footnote left out is no target')
})

t.test("emoji shortcodes by GitHub's names, never in code", async (t) => {
  t.equal(render(':tada: :+1: :rocket: :white_check_mark: :-1:'), '<p>🎉 👍 🚀 ✅ 👎</p>\n')
  t.equal(render(':no_such_emoji: :) :-( <3 :TADA:'), '<p>:no_such_emoji: :) :-( &lt;3 :TADA:</p>\n', 'unknown names and emoticons stay text (GitHub has no emoticons)')
  t.equal(render('`:tada:`\n\n    :tada:\n\n```\n:tada:\n```'), '<p><code>:tada:</code></p>\n<pre><code>:tada:\n</code></pre>\n<pre><code>:tada:\n</code></pre>\n', 'never in code')
  t.equal(render('[:tada:](https://example.com/:tada:) https://example.com/:tada:/x'),
    '<p><a href="https://example.com/:tada:">🎉</a> <a href="https://example.com/:tada:/x">https://example.com/:tada:/x</a></p>\n', 'in link text, never in a URL')
  t.equal(render(':tada:\\::tada:'), '<p>🎉:🎉</p>\n', 'beside an escape')
})
