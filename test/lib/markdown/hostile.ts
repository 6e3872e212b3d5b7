import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'

/**
 * Hostile Markdown: raw HTML that runs script, URLs with script-capable schemes in every
 * spelling we know of, and attempts to break out of attributes. Each must render to HTML that
 * `unsafeParts` finds nothing in (and, in the browser test, that runs no script).
 */
export interface HostileInput { name: string, markdown: string }

const raw: Array<[string, string]> = [
  // Raw HTML, inline and as HTML blocks
  ['script element', '<script>alert(1)</script>'],
  ['script element, upper case', '<SCRIPT>alert(1)</SCRIPT>'],
  ['script element split over lines', '<script\n>alert(1)</script\n>'],
  ['script inside a paragraph', 'text <script>alert(1)</script> text'],
  ['script after an HTML block opener', '<div>\n<script>alert(1)</script>\n</div>'],
  ['img onerror', '<img src=x onerror=alert(1)>'],
  ['img onerror, quoted', '<img src="x" onerror="alert(1)">'],
  ['svg onload', '<svg onload=alert(1)>'],
  ['svg with a script child', '<svg><script>alert(1)</script></svg>'],
  ['math with mglyph and style (mXSS)', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
  ['iframe javascript src', '<iframe src="javascript:alert(1)"></iframe>'],
  ['iframe srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>'],
  ['object data', '<object data="javascript:alert(1)"></object>'],
  ['embed src', '<embed src="javascript:alert(1)">'],
  ['style element', '<style>body{background:url("javascript:alert(1)")}</style>'],
  ['base href', '<base href="javascript:alert(1)//">\n\n[relative](x)'],
  ['meta refresh', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'],
  ['link import', '<link rel="import" href="data:text/html,<script>alert(1)</script>">'],
  ['form action', '<form action="javascript:alert(1)"><button>go</button></form>'],
  ['button formaction', '<button formaction="javascript:alert(1)">go</button>'],
  ['anchor with javascript href', '<a href="javascript:alert(1)">click</a>'],
  ['div with an event handler', '<div onmouseover="alert(1)">hover</div>'],
  ['details ontoggle', '<details open ontoggle=alert(1)>'],
  ['body onload', '<body onload=alert(1)>'],
  ['input autofocus onfocus', '<input autofocus onfocus=alert(1)>'],
  ['comment then script', '<!-- x --><script>alert(1)</script>'],
  ['comment hiding a closing', '<!-- --!><script>alert(1)</script> -->'],
  ['CDATA section', '<![CDATA[<script>alert(1)</script>]]>'],
  ['processing instruction', '<?xml-stylesheet href="javascript:alert(1)"?>'],
  ['declaration', '<!DOCTYPE html><script>alert(1)</script>'],
  ['nested script tag pieces', '<scr<script>ipt>alert(1)</scr</script>ipt>'],
  ['noscript title breakout', '<noscript><p title="</noscript><img src=x onerror=alert(1)>">'],
  ['template element', '<template><script>alert(1)</script></template>'],
  ['textarea breakout', '<textarea></textarea><script>alert(1)</script>'],
  ['raw HTML in a table cell', '| a | b |\n|---|---|\n| <script>alert(1)</script> | <img src=x onerror=alert(1)> |'],
  ['raw HTML in a list item', '- <img src=x onerror=alert(1)>\n- <script>alert(1)</script>'],
  ['raw HTML in a block quote', '> <svg onload=alert(1)>'],
  ['raw HTML inside strikethrough', '~~<script>alert(1)</script>~~'],
  ['raw HTML as link text', '[<img src=x onerror=alert(1)>](https://example.com)'],
  ['NUL inside a tag name', '<scr\u0000ipt>alert(1)</scr\u0000ipt>'],
  // Raw HTML that GitHub's allowlist keeps, with what it must not keep (issue #46)
  ['allowed elements with event handlers', '<p align="center" onclick="alert(1)"><img src="x" onerror="alert(1)" width="200"></p> <kbd onmouseover=alert(1)>k</kbd>'],
  ['details open ontoggle around Markdown', '<details open ontoggle=alert(1)>\n<summary onclick=alert(1)>s</summary>\n\n**x** [y](javascript:alert(1))\n\n</details>'],
  ['allowed elements with hostile URLs', '<a href="javascript:alert(1)">a</a> <img src="javascript:alert(1)"> <q cite="javascript:alert(1)">q</q> <img longdesc="javascript:alert(1)" src=x>'],
  ['hostile URLs obfuscated by entities and whitespace', '<a href="&#106;avascript:alert(1)">a</a> <a href=" &#x09;java&#x0A;script:alert(1)">b</a> <a href="jav&Tab;ascript:alert(1)">c</a> <a href="&#x01;javascript:alert(1)">d</a> <a href="java%09script:alert(1)">e</a>'],
  ['srcset with a hostile candidate', '<picture><source srcset="a.png 1x, javascript:alert(1) 2x"><source srcset="javascript:alert(1)"><img srcset="data:text/html,x 2x" src=a.png></picture>'],
  ['svg namespace confusion with style', '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">'],
  ['math namespace confusion with mglyph', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
  ['math and form nesting (DOMPurify 2.0.0)', '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>'],
  ['noscript parsing differential', '<noscript><style></noscript><img src=x onerror=alert(1)></style></noscript>'],
  ['xmp and title parsing differentials', '<xmp><p title="</xmp><img src=x onerror=alert(1)>"> <title><a title="</title><img src=x onerror=alert(1)>">'],
  ['textarea parsing differential', '<textarea><p title="</textarea><img src=x onerror=alert(1)>">'],
  ['iframe srcdoc, object, embed', '<iframe srcdoc="<script>alert(1)</script>"></iframe><object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">'],
  ['base, meta refresh, link', '<base href="javascript:alert(1)//"><meta http-equiv="refresh" content="0;url=javascript:alert(1)"><link rel=import href=x>'],
  ['formaction on an input and a button', '<input type=submit formaction="javascript:alert(1)"><button formaction=javascript:alert(1)>b</button>'],
  ['DOM clobbering through name and id', '<img name="getElementById"><a id="location" href="x">a</a><form name="cookie"></form><a name="install"></a>'],
  ['forged own markup', '<div class="markdown-alert markdown-alert-note" data-meridian-own="x" id="fn-1">x</div><input type="checkbox" disabled data-meridian-own="0"><h2 id="user-content-x" style="color:red">h</h2>'],
  ['an open tag swallowing a heading', '<div\nonclick="alert(1)" style="position:fixed"\n\n# Heading\n'],
  ['an open tag swallowing a footnote reference', '<a\nhref="javascript:alert(1)" onclick="alert(2)"\n\nText[^1]\n\n[^1]: note'],
  ['an open tag swallowing a task checkbox and a table cell', '<input\nonclick="alert(1)"\n\n- [x] task\n\n<th\nstyle="background:url(javascript:alert(1))"\n\n| a |\n|:-|\n| b |'],
  ['an open attribute value swallowing the rest', '<div title="\n\n# Heading\n\n<img src=x onerror=alert(1)>\n\n[x](https://a.b) "> tail'],
  ['an unclosed comment', 'a <!-- b\n\n<script>alert(1)</script>\n\n# c'],
  ['style and class from the input', '<span style="background:url(javascript:alert(1))" class="sr-only markdown-alert">s</span> <div data-x="1" target="_blank" rel="opener">d</div>'],
  ['script content inside allowed elements', '<div><script>alert(1)</script><style>*{color:red}</style></div>'],
  // Link and image URLs
  ['javascript link', '[a](javascript:alert(1))'],
  ['javascript link, upper case', '[a](JAVASCRIPT:alert(1))'],
  ['javascript link, mixed case', '[a](JaVaScRiPt:alert(1))'],
  ['javascript link with a title', '[a](javascript:alert(1) "title")'],
  ['javascript link in angle brackets', '[a](<javascript:alert(1)>)'],
  ['javascript link with spaces inside angle brackets', '[a](<  javascript:alert(1)>)'],
  ['javascript link, colon as a named entity', '[a](javascript&colon;alert(1))'],
  ['javascript link, letter as a decimal entity', '[a](&#106;avascript:alert(1))'],
  ['javascript link, letter as a hex entity', '[a](&#x6A;avascript:alert(1))'],
  ['javascript link, whole scheme as entities', '[a](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1))'],
  ['javascript link, tab entity inside the scheme', '[a](java&#x09;script:alert(1))'],
  ['javascript link, newline entity inside the scheme', '[a](java&#10;script:alert(1))'],
  ['javascript link, raw tab inside the scheme', '[a](<java\tscript:alert(1)>)'],
  ['javascript link, leading control character', '[a](\u0001javascript:alert(1))'],
  ['javascript link, leading control entity', '[a](&#1;javascript:alert(1))'],
  ['javascript link, NUL inside the scheme', '[a](java\u0000script:alert(1))'],
  ['javascript link, percent-encoded colon', '[a](javascript%3Aalert(1))'],
  ['javascript link, percent-encoded tab', '[a](java%09script:alert(1))'],
  ['javascript link, backslash-escaped colon', '[a](javascript\\:alert(1))'],
  ['javascript link with a comment and newline', '[a](javascript://%0aalert(1))'],
  ['vbscript link', '[a](vbscript:msgbox(1))'],
  ['file link', '[a](file:///etc/passwd)'],
  ['data text/html link', '[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['data svg link', '[a](data:image/svg+xml,<svg/onload=alert(1)>)'],
  ['data svg image', '![a](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)'],
  ['data image, upper case scheme', '![a](DATA:text/html,<script>alert(1)</script>)'],
  ['javascript image', '![a](javascript:alert(1))'],
  ['image inside a link, both hostile', '[![a](javascript:alert(1))](javascript:alert(2))'],
  ['javascript reference definition', '[a]\n\n[a]: javascript:alert(1)'],
  ['javascript reference definition in angle brackets', '[a][b]\n\n[b]: <javascript:alert(1)>'],
  ['entity-encoded reference definition', '[a]\n\n[a]: &#106;avascript:alert(1)'],
  ['reference definition with a title', '![a][b]\n\n[b]: vbscript:x "t"'],
  ['javascript autolink', '<javascript:alert(1)>'],
  ['javascript autolink, upper case', '<JAVASCRIPT:alert(1)>'],
  ['vbscript autolink', '<vbscript:msgbox(1)>'],
  ['data autolink', '<data:text/html,<script>alert(1)</script>>'],
  ['file autolink', '<file:///etc/passwd>'],
  ['hostile links in a table', '| a |\n|---|\n| [x](javascript:alert(1)) |'],
  ['hostile link in a nested list', '- a\n  - [x](javascript:alert(1))'],
  // Breaking out of attributes
  ['quote in a link title', '[a](https://example.com "x\\" onmouseover=\\"alert(1)")'],
  ['single quote in a link title', '[a](https://example.com \'x\\\' onmouseover=alert(1)\')'],
  ['quote in image alt text', '![x" onerror="alert(1)](https://example.com/a.png)'],
  ['quote in a URL', '[a](https://example.com/"onmouseover="alert(1))'],
  ['angle brackets in a URL', '[a](<https://example.com/"><script>alert(1)</script>>)'],
  ['quote in a fence info string', '```js" onload="alert(1)\ncode\n```'],
  ['script in a fence info string', '```"><script>alert(1)</script>\ncode\n```'],
  ['entities that spell a tag', '&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;'],
  ['code span with a tag', '`<script>alert(1)</script>`'],
  ['indented code with a tag', '    <script>alert(1)</script>'],
  // Extended autolinks and task lists
  ['bare javascript URL', 'javascript:alert(1) and javascript://example.com/%0aalert(1)'],
  ['bare URL with a quote', 'https://example.com/"onmouseover="alert(1) www.example.com/\'onmouseover=\'alert(1)'],
  ['bare URL with a tag', 'www.example.com/<script>alert(1)</script> https://a.b/<img src=x onerror=alert(1)>'],
  ['bare address with a tag', 'a@b.co<script>alert(1)</script>'],
  ['task list item with raw HTML', '- [x] <input type="checkbox" onclick="alert(1)">\n- [ ] <script>alert(1)</script>'],
  // Past the nesting bounds, where containers and links are text
  ['hostile link and raw HTML in a list nested past the bound', Array.from({ length: 14 }, (_, depth) => '  '.repeat(depth) + '- [x](javascript:alert(1)) <img src=x onerror=alert(1)>').join('\n')],
  ['raw HTML in block quotes and lists nested past the bound', '> '.repeat(8) + '- '.repeat(12) + '<script>alert(1)</script>\n' + '> '.repeat(8) + '<svg onload=alert(1)>'],
  ['javascript link inside links nested past the bound', '[a '.repeat(25) + '[x](javascript:alert(1))' + '](javascript:alert(2))'.repeat(25)],
  ['hostile image inside emphasis nested past the bound', '*a '.repeat(30) + '![x" onerror="alert(1)](data:text/html,<script>alert(1)</script>)' + ' a*'.repeat(30)],
  // GitHub's footnotes, alerts, heading ids and emoji
  ['footnote label that breaks out of its attributes', 'a[^"><img/src=x/onerror=alert(1)>]\n\n[^"><img/src=x/onerror=alert(1)>]: <script>alert(1)</script>'],
  ['footnote label with quotes and an entity', "a[^'onmouseover='alert(1)'] b[^&quot;onclick=&quot;alert(1)]\n\n[^'onmouseover='alert(1)']: x\n[^&quot;onclick=&quot;alert(1)]: y"],
  ['footnote label spelling javascript:', '[x](#fn-javascript:alert(1)) a[^javascript:alert(1)]\n\n[^javascript:alert(1)]: [y](javascript:alert(2))'],
  ['footnote definition of raw HTML and hostile links', 'a[^1]\n\n[^1]: <svg onload=alert(1)>\n\n    [x](javascript:alert(1)) <img src=x onerror=alert(1)>'],
  ['heading of raw HTML', '# "><script>alert(1)</script><img src=x onerror=alert(1)>\n\n[go](#scriptalert1scriptimg-srcx-onerroralert1)'],
  ['heading that slugs to javascript:', '# javascript:alert(1)\n\n[x](#javascriptalert1) [y](javascript:alert(1))'],
  ['heading of an attribute breakout', '## x" onmouseover="alert(1)\n## x" onmouseover="alert(1)'],
  ['alert holding raw HTML and hostile links', '> [!WARNING]\n> <script>alert(1)</script> [x](javascript:alert(1))\n> <img src=x onerror=alert(1)>'],
  ['alert marker with raw HTML after it', '> [!NOTE] <img src=x onerror=alert(1)>\n> x'],
  ['emoji shortcodes around raw HTML', ':tada:<script>alert(1)</script>:tada: :x:<img src=x onerror=alert(1)>:+1:'],
  // Math (TeX) and highlighted code
  ['TeX links', '$\\href{javascript:alert(1)}{x}$ $$\\url{javascript:alert(1)}$$ $\\href{https://example.com}{y}$'],
  ['TeX HTML extensions', '$\\htmlClass{x}{y} \\htmlId{x}{y} \\htmlStyle{color:red}{y} \\htmlData{foo=bar}{y}$'],
  ['TeX images', '$\\includegraphics[height=9em]{https://example.com/x.png}$ $\\includegraphics{javascript:alert(1)}$'],
  ['TeX classes, styles, labels and references', '$\\class{x}{y}$ $\\style{color:red}{y}$ $\\label{a}\\ref{a}\\eqref{a}$ $$x \\tag{a}$$'],
  ['TeX text holding tags', '$\\text{<script>alert(1)</script>}$ $`<img src=x onerror=alert(1)>`$ $\\verb|<svg onload=alert(1)>|$'],
  ['TeX closing its own markup', '$x</annotation></semantics></math><script>alert(1)</script>$ $$</math><img src=x onerror=alert(1)>$$'],
  ['a math fence holding tags', '```math\n</math><script>alert(1)</script>\\text{<img src=x onerror=alert(1)>}\n```'],
  ['TeX macros that expand forever', '$\\def\\a{\\a\\a}\\a$ $\\newcommand{\\b}{\\b\\b}\\b$ $\\gdef\\c{x}$ $\\c$'],
  ['TeX colours with script', '$\\color{javascript:alert(1)}{x}$ $\\colorbox{url(javascript:alert(1))}{y}$ $\\textcolor{red" onclick="alert(1)}{z}$'],
  ['TeX sizes past the page', '$\\rule{100000em}{100000em}$ $\\kern{100000em}x$ $\\Huge\\mathrm{X}$'],
  ['raw math and svg beside TeX', '<math><mi>x</mi><mglyph src=x></mglyph></math> $x$ <svg><circle r="1"></circle></svg>'],
  ['a forged own fragment', '<meridian-fragment data-meridian-own="x" data-index="0"></meridian-fragment> $x$\n\n```js\nlet a\n```'],
  ['highlighted code holding tags', '```js\n"</span><script>alert(1)</script>" // <img src=x onerror=alert(1)>\n```'],
  ['highlighted HTML code', '```html\n<script>alert(1)</script><img src=x onerror=alert(1)>\n```'],
  ['highlighted code inside raw HTML', '<div>\n\n```js\nlet a = "<img src=x onerror=alert(1)>"\n```\n\n</div>'],
  ['fence info breaking out of a highlighted language', '```js"><img src=x onerror=alert(1)>\nlet a\n```\n\n```js onclick=alert(1)\nlet b\n```'],
  // Look-alike schemes (issue #58, from DOMPurify's vectors): a browser reads each as a relative URL; another parser may not.
  ['U+2028 before a scheme', '<a href="\u2028javascript:alert(1)">a</a> [b](\u2028javascript:alert(1))'],
  ['Unicode spaces before a scheme', ['\u00a0', '\u1680', '\u180e', '\u2000', '\u200a', '\u200b', '\u205f', '\u3000']
    .map((space) => `<a href="${space}javascript:alert(1)">a</a><img src="${space}javascript:alert(1)">`).join(' ')],
  ['controls inside a scheme', '<a href="\u0001java\u0003script:alert(1)">a</a> <a href="java&#0;script:alert(3)">b</a> <a href="java\ufffdscript:alert(3)">c</a>']
]

export const hostileInputs: HostileInput[] = raw.map(([name, markdown]) => ({ name, markdown }))

/**
 * Everything the renderer may emit: Markdown's elements, and those GitHub keeps of raw HTML
 * (issue #46, from html-pipeline's SanitizationFilter). Anything else came from the input unfiltered.
 */
const ALLOWED_ELEMENTS = new Set([
  'p', 'em', 'strong', 'a', 'img', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'hr', 'br',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 's', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input',
  'sup', 'section', 'div',
  'b', 'dd', 'del', 'details', 'dl', 'dt', 'i', 'ins', 'kbd', 'picture', 'q', 'rp', 'rt', 'ruby', 'samp',
  'source', 'span', 'strike', 'sub', 'summary', 'tfoot', 'tt', 'var'
])
/** Markdown's attributes, and GitHub's for raw HTML: none loads or runs anything but the URL ones, checked below. */
const ALLOWED_ATTRIBUTES = new Set([
  'href', 'src', 'alt', 'title', 'class', 'start', 'style', 'type', 'checked', 'disabled',
  'id', 'data-footnote-ref', 'data-footnote-backref', 'data-footnotes', 'aria-describedby', 'aria-label',
  'abbr', 'accept', 'accept-charset', 'accesskey', 'action', 'align', 'axis', 'border', 'cellpadding', 'cellspacing',
  'char', 'charoff', 'charset', 'clear', 'colspan', 'color', 'cols', 'compact', 'coords', 'datetime', 'dir', 'enctype',
  'frame', 'hspace', 'headers', 'height', 'hreflang', 'for', 'ismap', 'itemprop', 'itemscope', 'itemtype', 'label',
  'lang', 'maxlength', 'media', 'method', 'multiple', 'name', 'nohref', 'noshade', 'nowrap', 'open', 'prompt',
  'readonly', 'rev', 'rowspan', 'rows', 'rules', 'scope', 'selected', 'shape', 'size', 'span', 'summary', 'tabindex',
  'usemap', 'valign', 'value', 'width', 'cite', 'longdesc', 'srcset', 'aria-labelledby'
])
/** Classes our renderer gives: a fence's language, GitHub's footnotes and alerts, highlight.js's token classes. */
const ALLOWED_CLASS = /^(?:language-\S*|footnotes|sr-only|data-footnote-backref|markdown-alert-title|markdown-alert markdown-alert-(?:note|tip|important|warning|caution)|hljs-[a-z-]+(?: [a-z-]+_*)*)$/

const MATHML = 'http://www.w3.org/1998/Math/MathML'
/** MathML Core's presentation elements (w3.org/TR/mathml-core), none of which loads or runs anything. */
const MATHML_ELEMENTS = new Set([
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'msup', 'msub', 'msubsup',
  'mfrac', 'msqrt', 'mroot', 'mover', 'munder', 'munderover', 'mtable', 'mtr', 'mtd', 'mstyle', 'mpadded', 'mphantom',
  'menclose', 'merror', 'mmultiscripts', 'mprescripts', 'none'
])
/** Their presentation attributes: no URL, class, style, id or data among them. */
const MATHML_ATTRIBUTES = new Set([
  'display', 'xmlns', 'encoding', 'mathvariant', 'mathcolor', 'mathbackground', 'mathsize', 'width', 'height', 'depth',
  'voffset', 'lspace', 'rspace', 'minsize', 'maxsize', 'linethickness', 'columnspacing', 'rowspacing', 'columnlines',
  'rowlines', 'columnalign', 'rowalign', 'scriptlevel', 'displaystyle', 'notation', 'fence', 'stretchy', 'separator',
  'largeop', 'accent', 'accentunder', 'linebreak', 'movablelimits', 'symmetric', 'form'
])

/**
 * MathML is the service's own only in the shape it writes (math > semantics > …, annotation of
 * TeX): raw `<math>` is never kept, so a math element of another shape came from the input.
 */
function mathProblems (math: Element): string[] {
  const problems: string[] = []
  const semantics = math.childNodes.filter((child): child is Element => 'tagName' in child)
  const annotation = semantics[0]?.childNodes.filter((child): child is Element => 'tagName' in child).at(-1)
  if (semantics.length !== 1 || semantics[0]?.tagName !== 'semantics' || annotation?.tagName !== 'annotation') problems.push('<math> not of the shape the service writes')
  const visit = (node: Element): void => {
    if (node.namespaceURI !== MATHML || !MATHML_ELEMENTS.has(node.tagName)) problems.push(`unexpected element <${node.tagName}> in math`)
    for (const { name, value } of node.attrs) {
      if (!MATHML_ATTRIBUTES.has(name)) problems.push(`unexpected attribute ${name} on <${node.tagName}>`)
      if (/[:(]/.test(value) && !(name === 'xmlns' && value === MATHML) && !(name === 'encoding' && value === 'application/x-tex') && !/^rgba?\(/.test(value)) {
        problems.push(`suspicious value ${name}=${value} on <${node.tagName}>`)
      }
    }
    for (const child of node.childNodes) if ('tagName' in child) visit(child)
  }
  visit(math)
  return problems
}
/** Every id, name and id reference carries GitHub's prefix, so that none clobbers an id of the embedding page. */
const ID_ATTRIBUTES = new Set(['id', 'name', 'aria-describedby', 'aria-labelledby'])

/** Named as the brief names them, for readable failures; the allow-list above covers more. */
const SCRIPT_CAPABLE_ELEMENTS = new Set([
  'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'style', 'svg', 'math',
  'form', 'base', 'meta', 'link', 'template', 'noscript', 'button', 'textarea'
])

/** Attributes whose value a browser may load or navigate to. */
const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'data', 'poster', 'background', 'xlink:href', 'srcdoc', 'cite', 'longdesc', 'itemtype'])

/* eslint-disable-next-line no-control-regex -- a browser strips these C0 controls from a URL, so the pattern names them */
const EDGE_CONTROLS_AND_SPACES = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g
const TAB_AND_NEWLINES = /[\t\n\r]/g

/**
 * The scheme a browser would use for this attribute value (entities are already decoded by
 * parse5): leading and trailing C0 controls and spaces stripped, tabs and newlines removed,
 * lower-cased. Written apart from lib/markdown/render.ts so that the test does not trust the code.
 */
export function browserScheme (value: string): string | null {
  const cleaned = value.replace(EDGE_CONTROLS_AND_SPACES, '').replace(TAB_AND_NEWLINES, '').toLowerCase()
  return /^([a-z][a-z0-9+.-]*):/.exec(cleaned)?.[1] ?? null
}

/** What any parser might read as a dangerous scheme: GitHub's scheme (before a `:` that comes before `/`, `?`, `#`) with only scheme characters left. */
function looksLikeDangerousScheme (value: string): boolean {
  const colon = value.indexOf(':')
  if (colon === -1 || ['/', '?', '#'].some((delimiter) => value.includes(delimiter) && value.indexOf(delimiter) < colon)) return false
  const squashed = value.slice(0, colon).toLowerCase().replace(/[^a-z0-9+.-]/g, '')
  return squashed === 'javascript' || squashed === 'vbscript' || squashed === 'file' || squashed === 'data'
}

function isDangerousUrl (value: string): boolean {
  if (looksLikeDangerousScheme(value) && !/^\s*data:image\/(?:gif|png|jpeg|webp)[;,]/i.test(value)) return true
  const scheme = browserScheme(value)
  if (scheme === 'javascript' || scheme === 'vbscript' || scheme === 'file') return true
  if (scheme !== 'data') return false
  return !/^data:image\/(?:gif|png|jpeg|webp)[;,]/.test(value.replace(EDGE_CONTROLS_AND_SPACES, '').replace(TAB_AND_NEWLINES, '').toLowerCase())
}

type Node = DefaultTreeAdapterMap['childNode']
type Element = DefaultTreeAdapterMap['element']

/** A task list item's checkbox: a disabled checkbox, ticked or not, nothing else. */
function isTaskCheckbox (attrs: Array<{ name: string, value: string }>): boolean {
  const names = attrs.map(({ name }) => name).sort().join()
  return (names === 'disabled,type' || names === 'checked,disabled,type') && attrs.every(({ name, value }) => name === 'type' ? value === 'checkbox' : value === '')
}

/**
 * What in this HTML could run script, read as a browser reads it (parse5 implements the
 * HTML standard's parser): elements other than Markdown's, event-handler and unknown
 * attributes, script-capable URLs, style other than table alignment. Empty when safe.
 */
export function unsafeParts (html: string): string[] {
  const problems: string[] = []
  const visit = (node: Node): void => {
    if ('tagName' in node && node.tagName === 'math' && node.namespaceURI === MATHML) {
      problems.push(...mathProblems(node))
      return
    }
    if ('tagName' in node) {
      const { tagName } = node
      if (SCRIPT_CAPABLE_ELEMENTS.has(tagName)) problems.push(`script-capable element <${tagName}>`)
      else if (tagName === 'input' && !isTaskCheckbox(node.attrs)) problems.push('an <input> other than a disabled checkbox')
      else if (!ALLOWED_ELEMENTS.has(tagName)) problems.push(`unexpected element <${tagName}>`)
      if (node.namespaceURI !== 'http://www.w3.org/1999/xhtml') problems.push(`foreign content <${tagName}>`)
      for (const { name, value } of node.attrs) {
        if (name.startsWith('on')) problems.push(`event handler ${name} on <${tagName}>`)
        else if (!ALLOWED_ATTRIBUTES.has(name)) problems.push(`unexpected attribute ${name} on <${tagName}>`)
        if (URL_ATTRIBUTES.has(name) && isDangerousUrl(value)) problems.push(`dangerous URL in ${name}: ${value}`)
        // Every piece between whitespace and commas, whichever a browser takes for a candidate's URL.
        if (name === 'srcset' && value.split(/[\t\n\f\r ,]+/).some(isDangerousUrl)) problems.push(`dangerous URL in srcset: ${value}`)
        if (name === 'style' && !/^text-align:(left|right|center)$/.test(value)) problems.push(`style ${value}`)
        if (name === 'class' && !ALLOWED_CLASS.test(value)) problems.push(`class ${value}`)
        if (ID_ATTRIBUTES.has(name) && !value.startsWith('user-content-')) problems.push(`${name} ${value} without the user-content- prefix`)
      }
    }
    const children = 'content' in node ? node.content.childNodes : 'childNodes' in node ? node.childNodes : []
    for (const child of children) visit(child)
  }
  for (const node of parseFragment(html).childNodes) visit(node)
  return problems
}
