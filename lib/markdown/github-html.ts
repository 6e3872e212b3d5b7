/**
 * The one sanitizer (docs/decisions.md, "Raw HTML"): parse5, then hast-util-sanitize with SCHEMA. Raw HTML gets
 * GitHub's allowlist; the service's own elements, marked with the render's random mark, exactly what it writes.
 */
import type { Element, ElementContent, Root, RootContent } from 'hast'
import { fromParse5 } from 'hast-util-from-parse5'
import { defaultSchema, sanitize, type Schema } from 'hast-util-sanitize'
import { toHtml } from 'hast-util-to-html'
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'

type Parse5Node = DefaultTreeAdapterMap['node']
type Parse5Parent = DefaultTreeAdapterMap['parentNode']
type PropertyDefinition = NonNullable<Schema['attributes']>[string][number]

/** Deeper elements become siblings: tree utilities recurse, writing costs grow with depth (docs/performance.md). */
export const MAX_HTML_DEPTH = 32

/** The attribute raw-html.ts marks the service's own elements with, and its property name in hast. */
export const OWN_MARK_ATTRIBUTE = 'data-meridian-own'
const MARK_PROPERTY = 'dataMeridianOwn'

/** An own element's name while sanitizing: the parser lowercases each name (SVG's aside), so no input can forge it. */
const OWN_PREFIX = 'OWN-'
const ownName = (tagName: string): string => OWN_PREFIX + tagName

/** The schemes a raw HTML URL may have (GitHub's rule: isAllowedRawUrl). */
const RAW_URL_SCHEMES = new Set(['http', 'https', 'mailto'])
/** Images only: what a browser shows as an image and never runs. */
const DATA_IMAGE = /^data:image\/(?:gif|png|jpeg|webp)[;,]/i
const IMAGE_ELEMENTS = new Set(['img', 'source'])
const URL_PROPERTIES = ['href', 'src', 'cite', 'longDesc'] as const

/** GitHub's clobbering (the default schema's): applied after the pass, to raw elements only (`finish`). */
const CLOBBER_PREFIX = defaultSchema.clobberPrefix!
const CLOBBERED = defaultSchema.clobber!

/** GitHub's allowlist (hast-util-sanitize's default) less what it allows its own markup: `class`, `data-*`, `input`. */
export const RAW_HTML_ELEMENTS: readonly string[] = defaultSchema.tagNames!.filter((tagName) => tagName !== 'input')
const isOwnOnly = (property: PropertyDefinition): boolean => {
  const name = typeof property === 'string' ? property : property[0]
  return name === 'className' || name.startsWith('data')
}
/** Every raw element's attributes, GitHub's global ones included (no `*`: it would reach the own elements too). */
const RAW_ATTRIBUTES = Object.fromEntries(RAW_HTML_ELEMENTS.map((tagName) => [tagName,
  [...(defaultSchema.attributes![tagName] ?? []), ...defaultSchema.attributes!['*']!]
    .filter((property) => !isOwnOnly(property))]))

const OWN_ID = /^user-content-/
const ALERT_KINDS = ['note', 'tip', 'important', 'warning', 'caution']
const TEXT_ALIGN = /^text-align:(?:left|right|center)$/

/** MathML Core's elements as KaTeX writes them (with `menclose`, MathML 3's, for `\boxed` and `\cancel`). */
const MATHML_ELEMENTS = [
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'msup', 'msub', 'msubsup',
  'mfrac', 'msqrt', 'mroot', 'mover', 'munder', 'munderover', 'mtable', 'mtr', 'mtd', 'mstyle', 'mpadded', 'mphantom',
  'menclose', 'merror', 'mmultiscripts', 'mprescripts', 'none'
]
/** A presentation value: lengths, numbers, names, colours; never a URL or a script. */
const PLAIN_VALUE = /^[\w\s.#%+,()-]*$/
const MATHML_ATTRIBUTES: PropertyDefinition[] = [
  ...['width', 'height', 'depth', 'voffset', 'lspace', 'rspace', 'minsize', 'maxsize', 'mathsize', 'linethickness',
    'columnspacing', 'rowspacing', 'columnlines', 'rowlines', 'columnalign', 'rowalign', 'scriptlevel', 'displaystyle',
    'mathvariant', 'mathcolor', 'mathbackground', 'notation', 'fence', 'stretchy', 'separator', 'largeop', 'accent',
    'accentunder', 'linebreak', 'movablelimits', 'symmetric', 'form'
  ].map((name): PropertyDefinition => [name, PLAIN_VALUE]),
  ['display', 'block', 'inline'],
  ['encoding', 'application/x-tex'],
  ['xmlns', 'http://www.w3.org/1998/Math/MathML']
]

/** What a fragment the service writes whole holds (MathML, highlight.js's spans): raw-html.ts's ownFragment. */
export const FRAGMENT_ELEMENTS: ReadonlySet<string> = new Set([...MATHML_ELEMENTS, 'span'])

/** Exactly the attributes the service writes on its own elements, values included. */
const OWN_ATTRIBUTES: Record<string, PropertyDefinition[]> = {
  ...Object.fromEntries(['h1', 'h3', 'h4', 'h5', 'h6'].map((heading) => [heading, [['id', OWN_ID]]])),
  h2: [['id', OWN_ID], ['className', 'sr-only']],
  th: [['style', TEXT_ALIGN]],
  td: [['style', TEXT_ALIGN]],
  div: [['className', 'markdown-alert', ...ALERT_KINDS.map((kind) => `markdown-alert-${kind}`)]],
  p: [['className', 'markdown-alert-title']],
  code: [['className', /^language-/]],
  // highlight.js's classes: `hljs-title function_` for its scope `title.function`, `language-xml` for an embedded one.
  span: [['className', /^(?:hljs-[\w-]+|[a-z]+_+|language-[\w-]+)$/]],
  section: ['dataFootnotes', ['className', 'footnotes']],
  li: [['id', OWN_ID]],
  // Markdown's links and images (render.ts's isSafeUrl passed their URLs) and the footnotes' links.
  a: ['href', 'title', ['id', OWN_ID], 'dataFootnoteRef', 'dataFootnoteBackref', ['ariaDescribedBy', OWN_ID],
    ['ariaLabel', /^Back to reference [\d-]+$/], ['className', 'data-footnote-backref']],
  img: ['src', 'alt', 'title'],
  input: [['type', 'checkbox'], 'checked', 'disabled'],
  ...Object.fromEntries(MATHML_ELEMENTS.map((element) => [element, MATHML_ATTRIBUTES]))
}

/** Raw HTML's part and the service's of one schema; raw URLs and ids are checked after the pass (`finish`). */
export const SCHEMA: Schema = {
  ...defaultSchema,
  tagNames: [...RAW_HTML_ELEMENTS, ...Object.keys(OWN_ATTRIBUTES).map(ownName)],
  attributes: {
    ...RAW_ATTRIBUTES,
    ...Object.fromEntries(Object.entries(OWN_ATTRIBUTES).map(([tagName, attributes]) => [ownName(tagName), attributes]))
  },
  required: { [ownName('input')]: { type: 'checkbox', disabled: true } },
  clobber: [],
  protocols: {},
  strip: ['script', 'style']
}

/**
 * GitHub's rule: a scheme is what precedes a `:` before any `/`, `?` or `#`; only http, https, mailto (and, on images,
 * `data:image/…`) are kept, so a look-alike such as `\u2028javascript:` is dropped.
 */
export function isAllowedRawUrl (url: string, image: boolean): boolean {
  const value = url.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '')
  const colon = value.indexOf(':')
  if (colon === -1) return true
  for (const delimiter of ['/', '?', '#']) {
    const at = value.indexOf(delimiter)
    if (at !== -1 && at < colon) return true
  }
  return RAW_URL_SCHEMES.has(value.slice(0, colon).toLowerCase()) || (image && DATA_IMAGE.test(value))
}

/**
 * Flattens, drops templates; a mark counts only as an element's first attribute: a raw tag left open before an own
 * start tag takes that tag in, but its own attributes come first, so it never passes for the service's own.
 */
function prepare (fragment: Parse5Parent, mark: string | undefined): void {
  const stack: Array<{ node: Parse5Parent, depth: number }> = [{ node: fragment, depth: 0 }]
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!
    if (depth === MAX_HTML_DEPTH - 1) node.childNodes = flattened(node.childNodes, node)
    for (const child of node.childNodes) {
      if (!('childNodes' in child)) continue
      prepareElement(child, mark)
      stack.push({ node: child, depth: depth + 1 })
    }
  }
}

function prepareElement (node: Parse5Parent, mark: string | undefined): void {
  if (node.nodeName === 'template') (node as DefaultTreeAdapterMap['template']).content.childNodes = []
  if (!('attrs' in node)) return
  const { attrs } = node
  const own = attrs[0]?.name === OWN_MARK_ATTRIBUTE && attrs[0].value === mark
  for (let index = attrs.length - 1; index >= (own ? 1 : 0); index--) {
    if (attrs[index]!.name === OWN_MARK_ATTRIBUTE) attrs.splice(index, 1)
  }
}

function flattened (nodes: Parse5Node[], parent: Parse5Parent): DefaultTreeAdapterMap['childNode'][] {
  const sequence: DefaultTreeAdapterMap['childNode'][] = []
  const pending = [...nodes].reverse()
  while (pending.length > 0) {
    const node = pending.pop()! as DefaultTreeAdapterMap['childNode']
    if ('childNodes' in node) {
      for (let index = node.childNodes.length - 1; index >= 0; index--) pending.push(node.childNodes[index]!)
      node.childNodes = []
    }
    node.parentNode = parent
    sequence.push(node)
  }
  return sequence
}

/** Parents before children, without recursion. */
function * elementsOf (root: Root): Generator<Element> {
  const pending: Array<Root | RootContent | ElementContent> = [root]
  while (pending.length > 0) {
    const node = pending.pop()!
    if (node.type === 'element') yield node
    if ('children' in node) {
      for (let index = node.children.length - 1; index >= 0; index--) pending.push(node.children[index]!)
    }
  }
}

/** Each element `prepare` left marked (or, in a fragment, each of FRAGMENT_ELEMENTS) takes its own name. */
function nameOwnElements (tree: Root, fragment: boolean): void {
  for (const element of elementsOf(tree)) {
    if (fragment ? !FRAGMENT_ELEMENTS.has(element.tagName) : element.properties[MARK_PROPERTY] === undefined) continue
    delete element.properties[MARK_PROPERTY]
    element.tagName = ownName(element.tagName)
  }
}

/** Every piece between whitespace and commas must pass (`2x` does), so no reading of the list finds a refused URL. */
const isAllowedSrcset = (srcset: string, image: boolean): boolean =>
  srcset.split(/[\t\n\f\r ,]+/).every((piece) => piece === '' || isAllowedRawUrl(piece, image))

function checkRawElement (element: Element): void {
  const { properties } = element
  const image = IMAGE_ELEMENTS.has(element.tagName)
  for (const name of URL_PROPERTIES) {
    const value = properties[name]
    if (value !== undefined && !isAllowedRawUrl(String(value), image)) delete properties[name]
  }
  if (properties.srcSet !== undefined && !isAllowedSrcset(String(properties.srcSet), image)) delete properties.srcSet
  for (const name of CLOBBERED) {
    const value = properties[name]
    if (value === undefined || value === null) continue
    element.properties[name] = Array.isArray(value)
      ? value.map((item) => CLOBBER_PREFIX + String(item))
      : CLOBBER_PREFIX + String(value)
  }
}

/** `#install` points at raw `<a name="install">`, now `user-content-install`, as for headings (anchors.ts). */
function linkToRawAnchors (fragmentLinks: Element[], rawIds: Set<string>): void {
  for (const link of fragmentLinks) {
    const fragment = String(link.properties.href).slice(1)
    let decoded: string
    try {
      decoded = decodeURIComponent(fragment)
    } catch {
      continue
    }
    const id = [decoded, decoded.toLowerCase()].map((name) => CLOBBER_PREFIX + name).find((name) => rawIds.has(name))
    if (id !== undefined) link.properties.href = '#' + encodeURIComponent(id)
  }
}

/** Own elements take their names back; raw ones have URLs and ids checked, and links to raw anchors follow them. */
function finish (tree: Root): void {
  const rawIds = new Set<string>()
  const fragmentLinks: Element[] = []
  for (const element of elementsOf(tree)) {
    if (element.tagName.startsWith(OWN_PREFIX)) {
      element.tagName = element.tagName.slice(OWN_PREFIX.length)
    } else {
      checkRawElement(element)
      for (const name of [element.properties.id, element.properties.name]) {
        if (typeof name === 'string') rawIds.add(name)
      }
    }
    const href = element.properties.href
    if (element.tagName === 'a' && typeof href === 'string' && href.startsWith('#') &&
      !href.startsWith('#' + CLOBBER_PREFIX)) fragmentLinks.push(element)
  }
  if (rawIds.size > 0) linkToRawAnchors(fragmentLinks, rawIds)
}

/** Own elements: those marked `mark`, or in a `'fragment'` its FRAGMENT_ELEMENTS; any other is raw HTML's. */
export function sanitizeHtml (html: string, own: { mark: string } | 'fragment'): string {
  const fragment = parseFragment(html)
  prepare(fragment, own === 'fragment' ? undefined : own.mark)
  const tree = fromParse5(fragment) as Root
  nameOwnElements(tree, own === 'fragment')
  const clean = sanitize(tree, SCHEMA) as Root
  finish(clean)
  return toHtml(clean, { closeSelfClosing: true, characterReferences: { useNamedReferences: true } })
}
