import t, { type Test } from 'tap'
import { renderSafeMarkdown as render } from '../../../lib/markdown/render.js'
import { ESCAPED } from '../../support/markdown-corpus.js'
import { MAX_HTML_DEPTH } from '../../../lib/markdown/github-html.js'
import { normalizeHtml } from '../../support/commonmark-normalize.js'
import { unsafeParts } from './hostile.js'

/** Rendered, as CommonMark's runner compares HTML: whitespace between blocks, attribute order and `<br />` against `<br>` aside. */
const rendered = (markdown: string): string => normalizeHtml(render(markdown))

/** Each case: the Markdown, and the HTML github.com gives for it (its Markdown API, as a README shows it). */
type Case = [name: string, markdown: string, github: string]

const check = (t: Test, cases: Case[]): void => {
  for (const [name, markdown, github] of cases) t.equal(rendered(markdown), normalizeHtml(github), name)
}

t.test("GitHub's allowed constructs render", async (t) => {
  check(t, [
    ['a centred logo', '<p align="center"><img src="logo.png" alt="Logo" width="200"></p>', '<p align="center"><img src="logo.png" alt="Logo" width="200"></p>'],
    ['a collapsible section', '<details><summary>More</summary>\n\nHidden *text*.\n\n</details>', '<details><summary>More</summary>\n<p>Hidden <em>text</em>.</p>\n</details>'],
    ['an open collapsible section', '<details open>\n<summary>Open</summary>\nx\n</details>', '<details open>\n<summary>Open</summary>\nx\n</details>'],
    ['keys', 'Press <kbd>Ctrl</kbd>+<kbd>C</kbd>.', '<p>Press <kbd>Ctrl</kbd>+<kbd>C</kbd>.</p>'],
    ['sub and sup', 'H<sub>2</sub>O and E=mc<sup>2</sup>', '<p>H<sub>2</sub>O and E=mc<sup>2</sup></p>'],
    ['a line break', 'one<br>two<br/>three', '<p>one<br>two<br>three</p>'],
    ['a dark-mode logo', '<picture>\n  <source media="(prefers-color-scheme: dark)" srcset="dark.png">\n  <img alt="Logo" src="light.png">\n</picture>',
      '<picture>\n  <source media="(prefers-color-scheme: dark)" srcset="dark.png">\n  <img alt="Logo" src="light.png">\n</picture>'],
    ['an anchor', '<a name="install"></a>\n\n## Install', '<p><a name="user-content-install"></a></p>\n<h2 id="user-content-install">Install</h2>'],
    ['a link with a title', '<a href="https://example.com" title="Example">site</a>', '<p><a href="https://example.com" title="Example">site</a></p>'],
    ['a definition list', '<dl><dt>Term</dt><dd>Definition</dd></dl>', '<dl><dt>Term</dt><dd>Definition</dd></dl>'],
    ['edits', '<del cite="https://a.example/why">old</del> <ins>new</ins> <s>gone</s> <strike>struck</strike>',
      '<p><del cite="https://a.example/why">old</del> <ins>new</ins> <s>gone</s> <strike>struck</strike></p>'],
    ['ruby', '<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>', '<p><ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby></p>'],
    ['a table of HTML', '<table>\n<tr><th colspan="2" align="left">h</th></tr>\n<tr><td rowspan="1" valign="top">c</td><td>d</td></tr>\n</table>',
      '<table>\n<tbody><tr><th colspan="2" align="left">h</th></tr>\n<tr><td rowspan="1" valign="top">c</td><td>d</td></tr>\n</tbody></table>'],
    ['var, samp, tt, q, i, b, span, div, hr, headings and pre', '<div lang="en"><var>x</var> <samp>out</samp> <tt>tt</tt> <q cite="https://a.example">q</q> <i>i</i> <b>b</b> <span title="t">s</span></div>\n<hr>\n<h3 id="x">h</h3>\n<pre>pre</pre>',
      '<div lang="en"><var>x</var> <samp>out</samp> <tt>tt</tt> <q cite="https://a.example">q</q> <i>i</i> <b>b</b> <span title="t">s</span></div>\n<hr>\n<h3 id="user-content-x">h</h3>\n<pre>pre</pre>']
  ])
})

t.test('elements GitHub does not allow: removed, their text kept; some removed whole; the tagfilter shows its tags as text', async (t) => {
  check(t, [
    ['unknown and presentational elements: their text stays', '<center><font color="red">red</font></center> <u>u</u> <mark>m</mark> <small>s</small>', 'red u m s'],
    ['forms and their controls', '<form action="/x"><label>L</label><button>B</button><select><option>O</option></select></form>', 'LBO'],
    ['script and style, with their content', '<div>a<script>alert(1)</script>b</div>', '<div>a&lt;script>alert(1)&lt;/script>b</div>'],
    ['a comment', 'a <!-- hidden --> b', '<p>a  b</p>'],
    ['a hand-written input', '<input type="checkbox" checked disabled> x', '<p> x</p>'],
    ['the tagfilter: title, textarea, style, xmp, iframe, noembed, noframes, script, plaintext',
      '<title>t</title> <textarea>a</textarea> <style>s</style> <xmp>x</xmp> <iframe>i</iframe> <noembed>n</noembed> <noframes>f</noframes> <script>s</script> <plaintext>p',
      '&lt;title>t&lt;/title> &lt;textarea>a&lt;/textarea> &lt;style>s&lt;/style> &lt;xmp>x&lt;/xmp> &lt;iframe>i&lt;/iframe> &lt;noembed>n&lt;/noembed> &lt;noframes>f&lt;/noframes> &lt;script>s&lt;/script> &lt;plaintext>p'],
    ['svg and math: removed, their text kept', '<svg><text>svg</text></svg><math><mi>x</mi></math>', '<p>svgx</p>'],
    ['object, embed, base, meta, link', '<object data="x">o</object><embed src="x"><base href="https://evil.example/"><meta http-equiv="refresh" content="0"><link rel="stylesheet" href="x">', '<p>o</p>']
  ])
})

t.test("attributes: GitHub's kept, the rest dropped", async (t) => {
  check(t, [
    ['style, class, handlers, data-*, target and rel dropped',
      '<p style="color:red" class="x" onclick="alert(1)" data-x="1" align="right"><a href="https://a.example" target="_blank" rel="noopener" onmouseover="x">a</a></p>',
      '<p align="right"><a href="https://a.example">a</a></p>'],
    ['the global list kept', '<div align="center" dir="rtl" lang="fr" title="t" id="i">x</div>', '<div align="center" dir="rtl" lang="fr" title="t" id="user-content-i">x</div>'],
    ['per element: img src and longdesc, source srcset, q cite', '<img src="a.png" longdesc="d.html" srcset="a.png 1x" usemap="#m" border="0">',
      '<img src="a.png" longdesc="d.html" usemap="#m" border="0">'],
    ['aria labels kept, prefixed where they name ids', '<table aria-describedby="d" aria-labelledby="l" aria-label="L"><tr><td>x</td></tr></table>',
      '<table aria-describedby="user-content-d" aria-labelledby="user-content-l" aria-label="L"><tbody><tr><td>x</td></tr></tbody></table>']
  ])
})

t.test("ids and names get the user-content- prefix, once, so that none clobbers the embedding page's", async (t) => {
  check(t, [
    ['id and name', '<div id="main"><img name="getElementById" src="x.png"></div>', '<div id="user-content-main"><img name="user-content-getElementById" src="x.png"></div>'],
    ['a heading of raw HTML and one of Markdown', '<h2 id="setup">Setup</h2>\n\n## Usage', '<h2 id="user-content-setup">Setup</h2>\n<h2 id="user-content-usage">Usage</h2>']
  ])
  const html = render('## Usage <kbd>x</kbd>\n\n[u](#usage-x) [i](#install)\n\n<a name="install"></a>')
  t.match(html, '<h2 id="user-content-usage-x">', "the service's heading id is not prefixed twice")
  t.match(html, '<a href="#user-content-usage-x">u</a>', 'a link to a heading points at its id')
  t.match(html, '<a href="#user-content-install">i</a>', 'and a link to a raw anchor at the anchor, as GitHub\'s script would')
})

t.test("URLs of raw HTML follow GitHub's rule: a scheme other than http, https or mailto removes the attribute, the element stays", async (t) => {
  check(t, [
    ['href', '<a href="javascript:alert(1)">a</a> <a href="https://a.example">b</a> <a href="ftp://a.example/f">c</a> <a href="mailto:x@a.example">d</a> <a href="/p">e</a>',
      '<p><a>a</a> <a href="https://a.example">b</a> <a>c</a> <a href="mailto:x@a.example">d</a> <a href="/p">e</a></p>'],
    ['relative URLs, a colon after a slash, question mark or number sign, and schemes in any case',
      '<a href="p:x/y">a</a> <a href="./p:x">b</a> <a href="?q=a:b">c</a> <a href="#a:b">d</a> <a href="HTTPS://a.example">e</a> <a href=" https://a.example ">f</a>',
      '<p><a>a</a> <a href="./p:x">b</a> <a href="?q=a:b">c</a> <a href="#a:b">d</a> <a href="HTTPS://a.example">e</a> <a href=" https://a.example ">f</a></p>'],
    ['obfuscated schemes', '<a href="&#106;avascript:x">a</a><a href=" java&#x09;script:x">b</a><a href="JAVASCRIPT:x">c</a><a href="java%09script:x">d</a>', '<p><a>a</a><a>b</a><a>c</a><a>d</a></p>'],
    ['src and longdesc', '<img src="javascript:x" longdesc="vbscript:x" alt="a"> <img src="data:image/png;base64,AA" alt="b"> <img src="data:text/html,x" alt="c">',
      '<p><img alt="a"> <img src="data:image/png;base64,AA" alt="b"> <img alt="c"></p>'],
    ['a data: image only where an image is', '<a href="data:image/png;base64,AA">a</a>', '<p><a>a</a></p>'],
    ['cite', '<q cite="javascript:x">q</q><blockquote cite="file:///etc/passwd">b</blockquote>', '<p><q>q</q></p><blockquote>b</blockquote><p></p>'],
    ['srcset: every candidate', '<picture><source srcset="a.png 1x, b.png 2x"><source srcset="a.png 1x, javascript:x 2x"><img src="a.png"></picture>',
      '<p><picture><source srcset="a.png 1x, b.png 2x"><source><img src="a.png"></picture></p>']
  ])
})

t.test("look-alike schemes (issue #58): every form DOMPurify's vectors use is no scheme GitHub allows, so the URL goes", async (t) => {
  const unicodeSpaces = ['\u00a0', '\u1680', '\u180e', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
    '\u2008', '\u2009', '\u200a', '\u200b', '\u205f', '\u3000']
  t.equal(unicodeSpaces.length, 17)
  const forms: Array<[string, string]> = [
    ['U+2028 before the scheme', '\u2028javascript:alert(1)'],
    ...unicodeSpaces.map((space): [string, string] => [`U+${space.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} before the scheme`, `${space}javascript:alert(1)`]),
    ['controls inside the scheme', '\u0001java\u0003script:alert(1)'],
    ['a NUL inside the scheme (U+FFFD once parsed)', 'java\0script:alert(3)'],
    ['U+FFFD inside the scheme', 'java\ufffdscript:alert(3)']
  ]
  for (const [name, url] of forms) {
    const escaped = url.replaceAll('\0', '&#0;')
    for (const html of [`<a href="${escaped}">x</a>`, `<img src="${escaped}">`, `<img srcset="${escaped} 1x">`, `<q cite="${escaped}">x</q>`]) {
      // The message names every character, or TAP would take a U+2028 for a line's end and lose the assertion.
      const shown = html.replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
      t.notMatch(render(html), /href=|src=|srcset=|cite=/, `${name}: ${shown}`)
    }
  }
})

t.test('Markdown around and inside HTML, as CommonMark says', async (t) => {
  check(t, [
    ['a blank line after <details> starts Markdown again', '<details>\n<summary>Show</summary>\n\n- one\n- **two**\n\n</details>',
      '<details>\n<summary>Show</summary>\n<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>\n</details>'],
    ['without the blank line, the block is HTML: Markdown is text', '<details>\n<summary>Show</summary>\n- one *x*\n</details>', '<details>\n<summary>Show</summary>\n- one *x*\n</details>'],
    ['inline HTML around emphasis, split over tokens', 'a <b>**bold** and `code`</b> b', '<p>a <b><strong>bold</strong> and <code>code</code></b> b</p>'],
    ['HTML inside a table cell and a list', '| a | b |\n|---|---|\n| <kbd>K</kbd> | x<br>y |\n\n- <sub>s</sub>',
      '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><kbd>K</kbd></td>\n<td>x<br>y</td>\n</tr>\n</tbody>\n</table>\n<ul>\n<li><sub>s</sub></li>\n</ul>'],
    ['a README head', '<h1 align="center">\n  <img src="logo.svg" width="120"><br>\n  Tool\n</h1>\n\n<p align="center"><a href="https://ci.example"><img src="badge.svg" alt="CI"></a></p>\n\n## Install\n\n```sh\nnpm i tool\n```',
      '<h1 align="center">\n  <img src="logo.svg" width="120"><br>\n  Tool\n</h1>\n<p align="center"><a href="https://ci.example"><img src="badge.svg" alt="CI"></a></p>\n<h2 id="user-content-install">Install</h2>\n<pre><code class="language-sh">npm i tool\n</code></pre>'],
    ['an HTML block ends at a blank line; an unclosed element holds what follows, as in a browser', '<div>\n*a*\n\n*b*', '<div>\n*a*\n<p><em>b</em></p></div>'],
    ['a footnote and an alert beside raw HTML', '> [!TIP]\n> Use <kbd>Tab</kbd>.\n\nText[^n] <b>x</b>\n\n[^n]: A <i>note</i>.',
      '<div class="markdown-alert markdown-alert-tip">\n<p class="markdown-alert-title">Tip</p>\n<p>Use <kbd>Tab</kbd>.</p>\n</div>\n<p>Text<sup><a href="#user-content-fn-n" id="user-content-fnref-n" data-footnote-ref="" aria-describedby="user-content-footnote-label">1</a></sup> <b>x</b></p>\n' +
      '<section data-footnotes="" class="footnotes"><h2 id="user-content-footnote-label" class="sr-only">Footnotes</h2>\n<ol>\n<li id="user-content-fn-n">\n<p>A <i>note</i>. <a href="#user-content-fnref-n" data-footnote-backref="" aria-label="Back to reference 1" class="data-footnote-backref">↩</a></p>\n</li>\n</ol>\n</section>']
  ])
})

t.test("the service's own markup survives exactly, and raw HTML cannot forge it", async (t) => {
  const document = '# Title\n\n- [x] done\n- [ ] todo\n\n> [!NOTE]\n> n\n\n| l | r |\n|:--|--:|\n| 1 | 2 |\n\n```js\nx\n```\n\nA[^1]\n\n[^1]: f\n'
  // hast-util-to-html writes a boolean attribute by its name alone, markdown-it with `=""`: the same to a browser.
  const same = (markdown: string): string => normalizeHtml(render(markdown)).replace(/ (checked|disabled)=""/g, ' $1')
  t.equal(same(document + '\n<b>raw</b>').replace(/<p><b>raw<\/b><\/p>/, ''), same(document), 'nothing of it is lost or changed')
  check(t, [
    ['an alert class from the input is dropped', '<div class="markdown-alert markdown-alert-note"><p class="markdown-alert-title">Note</p></div>', '<div><p>Note</p></div>'],
    ['footnote markup from the input is plain', '<section data-footnotes class="footnotes"><sup><a href="#fn-1" id="fnref-1" data-footnote-ref aria-describedby="footnote-label">1</a></sup></section>',
      '<section><sup><a href="#fn-1" id="user-content-fnref-1" aria-describedby="user-content-footnote-label">1</a></sup></section>'],
    ['a forged mark is removed', '<div data-meridian-own="x" class="markdown-alert">x</div>', '<div>x</div>'],
    ['a code class and a cell style from the input are dropped', '<pre><code class="language-js">x</code></pre><table><tr><td style="text-align:left">c</td></tr></table>',
      '<pre><code>x</code></pre><table><tbody><tr><td>c</td></tr></tbody></table>']
  ])
  const swallowed = render('<div\nonclick="alert(1)" class="markdown-alert" id="main"\n\n# Heading\n')
  t.same(unsafeParts(swallowed), [], `an open tag that takes in a heading's start tag gets none of its own attributes through: ${swallowed}`)
  t.notMatch(swallowed, /onclick|class=|id="main"/)
})

t.test('MARKDOWN_RAW_HTML=escape: every tag is text, as before', async (t) => {
  t.equal(render('<p align="center"><kbd>K</kbd></p>\n\nx <b>y</b>', ESCAPED), '<p>&lt;p align=&quot;center&quot;&gt;&lt;kbd&gt;K&lt;/kbd&gt;&lt;/p&gt;</p>\n<p>x &lt;b&gt;y&lt;/b&gt;</p>\n')
  const plain = '# T\n\n- [x] a\n\n> [!NOTE]\n> n\n\nA[^1] *b* <https://a.example>\n\n[^1]: f'
  t.equal(render(plain, ESCAPED), render(plain), 'a document without raw HTML renders the same either way')
})

t.test(`bounds: raw HTML nested past ${MAX_HTML_DEPTH} levels is flattened, nothing lost (time: the pathological corpus)`, async (t) => {
  const depth = (html: string): number => {
    let deepest = 0
    let open = 0
    for (const [tag] of html.matchAll(/<\/?div>/g)) { open += tag.startsWith('</') ? -1 : 1; deepest = Math.max(deepest, open) }
    return deepest
  }
  const nested = render('<div>'.repeat(10_000) + 'deep')
  t.equal(depth(nested), MAX_HTML_DEPTH, `10,000 nested <div> are ${MAX_HTML_DEPTH} deep`)
  t.equal(nested.split('<div>').length - 1, 10_000, 'every one of them is there')
  t.match(nested, /deep/)
})
