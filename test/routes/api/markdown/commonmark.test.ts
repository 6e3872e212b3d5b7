import { createRequire } from 'node:module'
import t from 'tap'
import MarkdownIt from 'markdown-it'
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'
import { build } from '../../../support/helper.js'
import { normalizeHtml, withoutServiceAdditions } from '../../../support/commonmark-normalize.js'
import { commonMarkExamplesChangedByGfm } from './gfm-spec-examples.js'
import { fromParse5 } from 'hast-util-from-parse5'
import { defaultSchema, sanitize, type Schema } from 'hast-util-sanitize'
import { toHtml } from 'hast-util-to-html'
import type { Root } from 'hast'

interface SpecExample { markdown: string, html: string, section: string, number: number }

// commonmark-spec is CommonJS without types: its `tests` are the spec's examples as data.
const { tests: examples } = createRequire(import.meta.url)('commonmark-spec') as { tests: SpecExample[] }

/** spec.txt writes tabs as `→`; the official runner turns them back into tabs. */
const withTabs = (text: string): string => text.replaceAll('→', '\t')

/** markdown-it with CommonMark's rules, tables and strikethrough, raw HTML on or off: whether raw HTML changes an example. */
function referenceRenderer (html: boolean): MarkdownIt {
  return new MarkdownIt('commonmark', { html }).enable(['table', 'strikethrough'])
}
const withRawHtml = referenceRenderer(true)
const withoutRawHtml = referenceRenderer(false)

/** An example involves raw HTML when letting raw HTML through changes how it renders. */
const involvesRawHtml = (markdown: string): boolean => withRawHtml.render(markdown) !== withoutRawHtml.render(markdown)

/** Every element our renderer may produce: CommonMark's, GFM's tables, strikethrough and task list checkboxes, GitHub's footnotes and alerts. */
const MARKDOWN_ELEMENTS = new Set([
  'p', 'em', 'strong', 'a', 'img', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'hr', 'br',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 's', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input',
  'sup', 'section', 'div'
])

type Node = DefaultTreeAdapterMap['childNode']

/** Element names, text and attribute values of an HTML fragment, as a browser reads them. */
function contents (html: string): { elements: Set<string>, text: string } {
  const elements = new Set<string>()
  let text = ''
  const visit = (node: Node): void => {
    if ('value' in node && node.nodeName === '#text') text += node.value
    if ('tagName' in node) {
      elements.add(node.tagName)
      for (const attribute of node.attrs) text += ' ' + attribute.value
    }
    const children = 'content' in node ? node.content.childNodes : 'childNodes' in node ? node.childNodes : []
    for (const child of children) visit(child)
  }
  for (const node of parseFragment(html).childNodes) visit(node)
  return { elements, text }
}

/** `<div`, `</span`, `<!--`, `<?`, `<![CDATA[`, `<!DOCTYPE`: raw HTML openings in a source. */
const RAW_HTML_OPENING = /<\/?[A-Za-z][A-Za-z0-9-]*(?=[\s/>])|<!--|<\?|<!\[CDATA\[|<![A-Za-z]/g

/**
 * Spec examples that do not involve raw HTML and still differ from the spec, each for a reason
 * we keep on purpose. Empty: markdown-it follows the spec on all of them.
 */
const KNOWN_DEVIATIONS = new Map<number, string>()

t.test('the normalizer does what the official one does (its doctests)', async (t) => {
  t.equal(normalizeHtml('<p>a  \t b</p>'), '<p>a b</p>')
  t.equal(normalizeHtml('<p>a  \t\nb</p>'), '<p>a b</p>')
  t.equal(normalizeHtml(' <p>a  b</p>'), '<p>a b</p>')
  t.equal(normalizeHtml('<p>a  b</p> '), '<p>a b</p>')
  t.equal(normalizeHtml('\n\t<p>\n\t\ta  b\t\t</p>\n\t'), '<p>a b</p>')
  t.equal(normalizeHtml('<i>a  b</i> '), '<i>a b</i> ')
  t.equal(normalizeHtml('<br />'), '<br>')
  t.equal(normalizeHtml('<a title="bar" HREF="foo">x</a>'), '<a href="foo" title="bar">x</a>')
  t.equal(normalizeHtml('&forall;&amp;&gt;&lt;&quot;'), '\u2200&amp;&gt;&lt;&quot;')
  t.equal(normalizeHtml('<pre>a  \n b</pre>'), '<pre>a  \n b</pre>', 'whitespace in <pre> is kept')
})

t.test('every CommonMark spec example through POST /api/markdown/parse, MARKDOWN_RAW_HTML=escape', async (t) => {
  const app = await build(t, { MARKDOWN_RAW_HTML: 'escape' })
  t.ok(examples.length >= 650, `the spec has its ${examples.length} examples`)

  const render = async (markdown: string): Promise<string> => {
    const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown } })
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${response.body}`)
    return response.json<{ data: string }>().data
  }

  const plain = { total: 0, passed: 0, failed: [] as number[] }
  const raw = { total: 0, passed: 0, failed: [] as number[] }
  for (const example of examples) {
    const markdown = withTabs(example.markdown)
    const html = await render(markdown)
    if (!involvesRawHtml(markdown)) {
      plain.total++
      const expected = normalizeHtml(commonMarkExamplesChangedByGfm.get(example.number) ?? withTabs(example.html))
      const actual = normalizeHtml(withoutServiceAdditions(html))
      if (actual === expected) plain.passed++
      else {
        plain.failed.push(example.number)
        if (!KNOWN_DEVIATIONS.has(example.number)) {
          t.comment(`example ${example.number} (${example.section})\n${markdown}\nexpected ${expected}\nactual   ${actual}`)
        }
      }
      continue
    }
    raw.total++
    // Raw HTML is text: the example renders as markdown-it renders it with HTML off…
    const sameAsHtmlOff = normalizeHtml(withoutServiceAdditions(html)) === normalizeHtml(withoutRawHtml.render(markdown))
    // …no element comes from the input, and every tag of the input is there to read.
    const { elements, text } = contents(withoutServiceAdditions(html))
    const foreign = [...elements].filter((name) => !MARKDOWN_ELEMENTS.has(name))
    const hidden = [...markdown.matchAll(RAW_HTML_OPENING)].map(([opening]) => opening)
      .filter((opening) => !text.includes(opening))
    if (sameAsHtmlOff && foreign.length === 0 && hidden.length === 0) raw.passed++
    else {
      raw.failed.push(example.number)
      t.comment(`example ${example.number}: html-off ${sameAsHtmlOff}, foreign ${foreign.join()}, hidden ${hidden.join()}\n${html}`)
    }
  }

  t.comment(`CommonMark examples without raw HTML: ${plain.passed}/${plain.total} as the spec says (${commonMarkExamplesChangedByGfm.size} as GFM's extended autolinks say)`)
  t.comment(`CommonMark examples with raw HTML: ${raw.passed}/${raw.total} escaped as text, otherwise as the spec says`)
  t.same(plain.failed, [...KNOWN_DEVIATIONS.keys()], 'only the listed examples differ from the spec')
  t.same(raw.failed, [], 'raw HTML is always text')
  t.equal(plain.total + raw.total, examples.length, 'every example is in one group')
  t.ok(raw.total >= 50, `the raw-HTML group is not empty by a mistake (${raw.total})`)
})

/** GFM's tagfilter (spec 0.29, "Disallowed Raw HTML"), as the spec words it: the `<` of these tags becomes `&lt;`. */
const tagfilter = (html: string): string =>
  html.replace(/<(\/?)(title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\t\n\f\r />])/gi, '&lt;$1$2')

/** GitHub's allowlist as issue #46 gives it: hast-util-sanitize's default schema, without class, data-* and input. */
const GITHUB_RAW_HTML: Schema = {
  ...defaultSchema,
  tagNames: defaultSchema.tagNames!.filter((name) => name !== 'input'),
  attributes: Object.fromEntries(Object.entries(defaultSchema.attributes!).map(([name, properties]) =>
    [name, properties.filter((property) => !/^(?:className|data)/.test(typeof property === 'string' ? property : property[0]))])),
  required: {},
  strip: ['script', 'style']
}

/** The spec's own answer, as GitHub's tagfilter and sanitizer leave it. */
const asGithubLeavesIt = (html: string): string =>
  toHtml(sanitize(fromParse5(parseFragment(tagfilter(html))) as Root, GITHUB_RAW_HTML))

/** Raw-HTML examples whose answer differs, each with its reason. Empty: none does. */
const RAW_HTML_DEVIATIONS = new Map<number, string>()

t.test("every CommonMark raw-HTML example, by default: the spec's answer as GitHub's sanitizer leaves it", async (t) => {
  const app = await build(t)
  const failed: number[] = []
  let total = 0
  for (const example of examples) {
    const markdown = withTabs(example.markdown)
    if (!involvesRawHtml(markdown)) continue
    total++
    const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown } })
    const actual = normalizeHtml(withoutServiceAdditions(response.json<{ data: string }>().data))
    const expected = normalizeHtml(asGithubLeavesIt(withTabs(example.html)))
    if (actual === expected) continue
    failed.push(example.number)
    if (!RAW_HTML_DEVIATIONS.has(example.number)) t.comment(`example ${example.number} (${example.section})\n${markdown}\nexpected ${expected}\nactual   ${actual}`)
  }
  t.comment(`CommonMark examples with raw HTML: ${total - failed.length}/${total} as GitHub's sanitizer leaves the spec's answer`)
  t.same(failed, [...RAW_HTML_DEVIATIONS.keys()], 'only the listed examples differ')
  t.ok(total >= 50, `the raw-HTML group is not empty by a mistake (${total})`)
})
