import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'
import t from 'tap'
import { DEFAULT_MARKDOWN_FEATURES, renderSafeMarkdown as render } from '../../../lib/markdown/render.js'
import { FORMULA_FLOOR_CHARACTERS, MATH_SOURCE_PER_DOCUMENT, mathml, MAX_FORMULA_DEPTH, MAX_FORMULA_LENGTH } from '../../../lib/markdown/math.js'
import { sanitizeHtml } from '../../../lib/markdown/github-html.js'

const NO_MATH = { ...DEFAULT_MARKDOWN_FEATURES, math: false }
type Element = DefaultTreeAdapterMap['element']

/** The elements of rendered HTML, as a browser's parser builds them: name and attributes. */
function elementsOf (html: string): Element[] {
  const found: Element[] = []
  const visit = (node: DefaultTreeAdapterMap['node']): void => {
    if ('tagName' in node) found.push(node)
    if ('childNodes' in node) for (const child of node.childNodes) visit(child)
  }
  visit(parseFragment(html))
  return found
}

const names = (html: string): string[] => elementsOf(html).map((element) => element.tagName)

t.test('GitHub\'s math syntax becomes MathML', async (t) => {
  t.same(names(render('$x^2$')), ['p', 'math', 'semantics', 'mrow', 'msup', 'mi', 'mn', 'annotation'], '$…$ inline: a superscript')
  t.match(render('$x^2$'), '<annotation encoding="application/x-tex">x^2</annotation>', 'the TeX kept in an annotation')
  t.same(names(render('$`\\frac{a}{b}`$')).slice(0, 5), ['p', 'math', 'semantics', 'mrow', 'mfrac'], '$`…`$: a fraction')
  t.match(render('a $$\\frac{a}{b}$$ b'), /<p>a <math xmlns="http:\/\/www\.w3\.org\/1998\/Math\/MathML" display="block">.*<mfrac>/, '$$…$$ within a line: displayed')
  const block = render('$$\n\\begin{matrix}a & b\\\\\nc & d\\end{matrix}\n$$')
  t.ok(block.startsWith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'), '$$ on lines of their own: a block')
  t.equal(names(block).filter((name) => name === 'mtr').length, 2, 'a matrix: a table of two rows')
  t.equal(names(block).filter((name) => name === 'mtd').length, 4)
  t.ok(render('```math\n\\sqrt{2}\n```').startsWith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><semantics><mrow><msqrt>'), '```math: a block')
  t.same(names(render('$a_1 + b_2$')).filter((name) => name === 'msub').length, 2, 'underscores in a formula are subscripts, not emphasis')
})

t.test('dollars of prose stay text', async (t) => {
  for (const prose of ['costs $5 and $10', '$HOME and $PATH', 'a \\$x\\$ b', '`$x$` and ``$`y`$``', '$ x$', '$x $', 'pay $1$2 or $3', 'US$ 5', '$$', '$ $']) {
    t.notMatch(render(prose), '<math', prose)
  }
  t.equal(render('costs $5 and $10'), '<p>costs $5 and $10</p>\n')
  t.equal(render('a \\$x\\$ b'), '<p>a $x$ b</p>\n', 'escaped dollars are dollars')
  t.equal(render('`$x$`'), '<p><code>$x$</code></p>\n', 'a code span stays code')
  t.match(render('$x$ costs $5'), /^<p><math .*<\/math> costs \$5<\/p>\n$/, 'a formula beside a price')
  t.equal(render('$a$, `$b$`, $c$').match(/<math/g)?.length, 2, 'a closing dollar is never taken from a code span')
})

t.test('a formula that does not parse is its source', async (t) => {
  t.equal(render('bad $\\frac{a$ here'), '<p>bad $\\frac{a$ here</p>\n', 'inline: its dollars are text, what they held Markdown as ever')
  t.equal(render('x $*a* \\unknowncommand$ y'), '<p>x $<em>a</em> \\unknowncommand$ y</p>\n')
  t.equal(render('$$\n\\frac{a\n$$'), '<pre><code class="language-math">\n\\frac{a\n</code></pre>\n', 'displayed: a math code block')
  t.equal(render('```math\n\\begin{x}\n```'), '<pre><code class="language-math">\\begin{x}\n</code></pre>\n')
  t.equal(render('<b>x</b>\n\n$$\n\\frac{a\n$$'), '<p><b>x</b></p>\n<pre><code class="language-math">\n\\frac{a\n</code></pre>\n',
    'with raw HTML beside it too, its class kept as the service\'s own')
})

t.test('MARKDOWN_MATH=off: dollars and math fences as before', async (t) => {
  t.equal(render('$x^2$ and $$y$$', NO_MATH), '<p>$x^2$ and $$y$$</p>\n')
  t.equal(render('```math\nx\n```', NO_MATH), '<pre><code class="language-math">x\n</code></pre>\n')
})

/** Whatever a command asks for, none of these reaches the output. */
function forbiddenIn (html: string): string[] {
  const found: string[] = []
  for (const element of elementsOf(html)) {
    if (!['p', 'pre', 'code'].includes(element.tagName) && element.namespaceURI !== 'http://www.w3.org/1998/Math/MathML') found.push(`<${element.tagName}>`)
    if (['a', 'img', 'image', 'mglyph', 'svg', 'iframe', 'object'].includes(element.tagName)) found.push(`<${element.tagName}>`)
    for (const { name, value } of element.attrs) {
      if (element.tagName === 'code' && name === 'class' && value === 'language-math') continue
      if (['href', 'src', 'class', 'style', 'id', 'xlink:href'].includes(name) || name.startsWith('data-') || name.startsWith('on')) found.push(`${name} on <${element.tagName}>`)
    }
  }
  return found
}

t.test('untrusted TeX adds no link, class, style, id, data attribute or image', async (t) => {
  const commands = [
    '\\href{https://example.com}{x}', '\\href{javascript:alert(1)}{x}', '\\url{https://example.com}', '\\htmlClass{c}{x}',
    '\\htmlId{i}{x}', '\\htmlStyle{color:red}{x}', '\\htmlData{k=v}{x}', '\\class{c}{x}', '\\style{color:red}{x}', '\\cssId{i}{x}',
    '\\includegraphics{https://example.com/x.png}', '\\includegraphics[width=9em]{x.png}', '\\label{l}', '\\ref{l}', '\\eqref{l}',
    '\\color{red}{x}', '\\colorbox{red}{x}', '\\fcolorbox{red}{blue}{x}', '\\textcolor{#f00}{x}', '\\cancel{x}', '\\boxed{x}',
    '\\operatorname{op}', '\\text{<b>x</b>}', '\\verb|<b>|', '\\tag{1}', '\\rule{1em}{1em}', '\\mathrm{\\Huge X}'
  ]
  for (const command of commands) {
    for (const source of [`$${command}$`, `$$${command}$$`, `\`\`\`math\n${command}\n\`\`\``, `<b>raw HTML beside</b> $${command}$`]) {
      t.same(forbiddenIn(render(source).replace('<b>raw HTML beside</b>', '')), [], source)
    }
  }
})

t.test('the sanitizer keeps of a formula MathML\'s own elements and attributes, and nothing else', async (t) => {
  const safeMathml = (html: string): string => sanitizeHtml(html, 'fragment')
  t.equal(safeMathml('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><mi mathvariant="normal">x</mi></math>'),
    '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><mi mathvariant="normal">x</mi></math>', 'KaTeX\'s MathML as it is')
  t.equal(safeMathml('<math><mrow href="https://a" class="c" style="color:red" id="i" data-x="y" onclick="a()"><mi>x</mi></mrow></math>'),
    '<math><mrow><mi>x</mi></mrow></math>', 'links, classes, styles, ids, data and handlers')
  t.equal(safeMathml('<math><mglyph src="x.png"></mglyph><a href="javascript:x">t</a><img src="x"><mi>x</mi></math>'), '<math><a>t</a></math><img src="x" /><mi>x</mi>',
    'no MathML image; a link or image (which ends the formula, as in a browser) is held to raw HTML\'s rules, its URL to GitHub\'s')
  t.equal(safeMathml('<math><mstyle mathcolor="url(javascript:x)"><mi>x</mi></mstyle></math>'), '<math><mstyle><mi>x</mi></mstyle></math>', 'a value that is no plain value')
  t.equal(safeMathml('<math xmlns="http://evil.example"><annotation encoding="text/html">x</annotation></math>'), '<math><annotation>x</annotation></math>')
  t.equal(safeMathml('<math><mi>a < b</mi><mi x=y>c</mi></math>'), '<math><mi>a &lt; b</mi><mi>c</mi></math>', 'a < is text, an unquoted attribute is read as a browser reads it')
  t.equal(safeMathml('<math><mi>x</mi></math><script>alert(1)</script><span class="hljs-keyword x" onclick="a()">y</span>'),
    '<math><mi>x</mi></math><span class="hljs-keyword">y</span>', 'a script goes whole; of a span only highlight.js\'s classes stay')
})

t.test('bounded: long and deep formulas, macro bombs and formulas past the document\'s budget stay source', async (t) => {
  t.match(mathml('x'.repeat(MAX_FORMULA_LENGTH), false, {}), '<math', `${MAX_FORMULA_LENGTH} characters render`)
  t.equal(mathml('x'.repeat(MAX_FORMULA_LENGTH + 1), false, {}), undefined, 'one more stays source')
  const nested = (depth: number): string => '{'.repeat(depth) + 'x' + '}'.repeat(depth)
  t.match(mathml(nested(MAX_FORMULA_DEPTH), false, {}), '<math', `braces ${MAX_FORMULA_DEPTH} deep render`)
  t.equal(mathml(nested(MAX_FORMULA_DEPTH + 1), false, {}), undefined, 'one deeper stays source')
  t.equal(mathml('\\{'.repeat(200) + 'x', false, {})?.includes('<math'), true, 'escaped braces do not count')
  const thousandFractions = '\\frac{'.repeat(1000) + 'x' + '}{y}'.repeat(1000)
  t.equal(render(`$${thousandFractions}$`), `<p>$${thousandFractions}$</p>\n`, '1000 nested fractions: source')
  for (const bomb of ['\\def\\a{\\a\\a}\\a', '\\newcommand{\\b}{\\b\\b}\\b', '\\def\\c#1{#1#1}\\c{\\c{\\c{\\c{\\c{\\c{\\c{\\c{\\c{\\c{\\c{x}}}}}}}}}}}']) {
    t.equal(mathml(bomb, false, {}), undefined, `${bomb}: its expansion is bounded, and it stays source`)
  }
  t.match(render('$\\gdef\\g{x}$ $\\g$'), '$\\g$', 'a macro defined in one formula is unknown to the next')
  const full = MATH_SOURCE_PER_DOCUMENT - FORMULA_FLOOR_CHARACTERS
  t.equal(mathml('x', false, { mathCharacters: full + 1 }), undefined, 'a document past its budget renders no more formulas')
  const env = { mathCharacters: full }
  t.match(mathml('x', false, env), '<math', 'one within it does')
  t.equal(env.mathCharacters, MATH_SOURCE_PER_DOCUMENT, 'counted at its floor')
  const source = Array.from({ length: 20_000 }, (_, index) => `$x_{${index}}$`).join(' ')
  const many = render(source)
  const rendered = MATH_SOURCE_PER_DOCUMENT / FORMULA_FLOOR_CHARACTERS
  t.equal(many.match(/<msub>/g)?.length, rendered, `20,000 formulas: the first ${rendered} rendered, by their size and not the clock`)
  t.equal(many.match(/\$x_\{\d+\}\$/g)?.length, 20_000 - rendered, 'the rest their source')
  t.equal(render(source), many, 'the same document renders the same')
  const same = render('$x_1$ '.repeat(20_000))
  t.equal(same.match(/<msub>/g)?.length, 20_000, 'one formula written 20,000 times counts once: it is rendered and sanitized once')
})

t.test('math and highlighted code are the service\'s own in a document with raw HTML: exactly as without it, and never forged', async (t) => {
  const body = 'A $x^2$ and $$\\frac{a}{b}$$.\n\n```js\nconst a = "<b>" // c\n```\n\n```math\n\\sqrt{2}\n```\n'
  const alone = render(body)
  const withRawHtml = render('<kbd>K</kbd>\n\n' + body)
  t.ok(withRawHtml.startsWith('<p><kbd>K</kbd></p>\n'), 'the raw HTML kept')
  t.equal(withRawHtml.slice('<p><kbd>K</kbd></p>\n'.length), alone, 'the rest byte for byte as without raw HTML')
  const forged = render('<meridian-fragment data-meridian-own="guess" data-index="0"></meridian-fragment>\n\n$x$')
  t.notMatch(forged, 'meridian-fragment', 'a forged fragment element is removed')
  t.equal(forged.match(/<math/g)?.length, 1, 'and stands for nothing')
  t.equal(render('<math><mi>x</mi></math> <svg><circle r="1"></circle></svg> $y$').match(/<math|<svg/g)?.length, 1, 'raw <math> and <svg> removed, as on GitHub; the formula kept')
})

t.test('a formula in a link label: the label is scanned without failing', async (t) => {
  // markdown-it scans a label silently first; a rule that did not move past its formula then threw (a 500).
  t.match(render('[$a$'), /^<p>\[<math[^]*<\/math><\/p>\n$/, 'an unclosed label')
  t.match(render('[$a$](https://example.com)'), /^<p><a href="https:\/\/example.com"><math[^]*<\/math><\/a><\/p>\n$/, 'a link whose text is a formula')
  t.same(render('[[[[$x^2$]]]]').match(/<math/g)?.length, 1, 'nested labels hold the formula once')
})

t.test('a $$ block after a list item whose $$ found no closing line is still a block (issue #58)', async (t) => {
  const alone = render('b\n\n$$\nx\n$$\n')
  t.match(alone, /^<p>b<\/p>\n<math [^>]*display="block"/, 'without the list item: display math')
  t.equal(render('- $$\n  a\n\nb\n\n$$\nx\n$$\n'), '<ul>\n<li>$$\na</li>\n</ul>\n' + alone, 'after it: the same block')
})
