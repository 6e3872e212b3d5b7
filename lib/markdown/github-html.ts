import type { Element, ElementContent, Properties, Root, RootContent } from 'hast'
import { fromParse5 } from 'hast-util-from-parse5'
import { defaultSchema, sanitize, type Schema } from 'hast-util-sanitize'
import { toHtml } from 'hast-util-to-html'
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5'
import { OWN_FRAGMENT_TAG, OWN_MARK_ATTRIBUTE } from './raw-html.js'

/**
 * Raw HTML as github.com shows it: the whole render parsed as browsers do (parse5), sanitized with GitHub's
 * allowlist (docs/decisions.md, "Raw HTML"). The service's own markup, carrying this render's mark (raw-html.ts),
 * is set aside and put back through a schema of exactly what the service writes: raw HTML can neither forge it
 * nor, by leaving a tag open before it, add attributes to it.
 */

type Parse5Node = DefaultTreeAdapterMap['node']
type Parse5Parent = DefaultTreeAdapterMap['parentNode']

/** Deeper elements become siblings: tree utilities recurse, writing costs grow with depth (docs/performance.md). */
export const MAX_HTML_DEPTH = 32

/** render.ts's policy: false for a URL that must not be emitted. */
export type UrlPolicy = (url: string) => boolean

const MARK_PROPERTY = 'dataMeridianOwn'

const URL_PROPERTIES = ['href', 'src', 'cite', 'longDesc'] as const

const withoutClassesAndData = (definitions: Schema['attributes']): NonNullable<Schema['attributes']> => Object.fromEntries(
  Object.entries(definitions ?? {}).map(([tagName, properties]) => [tagName, properties.filter((property) => {
    const name = typeof property === 'string' ? property : property[0]
    return name !== 'className' && !name.startsWith('data')
  })]))

/**
 * GitHub's allowlist (hast-util-sanitize's default) less what it allows for GitHub's own markup: `class`, `data-*`,
 * `<input>`. URLs go through `UrlPolicy` instead of its schemes, so raw HTML and Markdown links follow one rule.
 */
export const RAW_HTML_SCHEMA: Schema = {
  ...defaultSchema,
  tagNames: defaultSchema.tagNames!.filter((tagName) => tagName !== 'input'),
  attributes: {
    ...withoutClassesAndData(defaultSchema.attributes),
    '*': [...defaultSchema.attributes!['*']!, MARK_PROPERTY]
  },
  required: {},
  protocols: {},
  strip: ['script', 'style']
}

const OWN_ID = /^user-content-/
const ALERT_KINDS = ['note', 'tip', 'important', 'warning', 'caution']

/** Exactly the markup the service writes and raw HTML may not; checked again, values included, when put back. */
const OWN_MARKUP_SCHEMA: Schema = {
  tagNames: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'th', 'td', 'div', 'p', 'code', 'section', 'li', 'a', 'input'],
  attributes: {
    ...Object.fromEntries(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((heading) => [heading, [['id', OWN_ID]]])),
    h2: [['id', OWN_ID], ['className', 'sr-only']],
    th: [['style', /^text-align:(?:left|right|center)$/]],
    td: [['style', /^text-align:(?:left|right|center)$/]],
    div: [['className', 'markdown-alert', ...ALERT_KINDS.map((kind) => `markdown-alert-${kind}`)]],
    p: [['className', 'markdown-alert-title']],
    code: [['className', /^language-/]],
    section: ['dataFootnotes', ['className', 'footnotes']],
    li: [['id', OWN_ID]],
    a: [['href', /^#user-content-/], ['id', OWN_ID], 'dataFootnoteRef', 'dataFootnoteBackref',
      ['ariaDescribedBy', OWN_ID], ['ariaLabel', /^Back to reference [\d-]+$/], ['className', 'data-footnote-backref']],
    input: [['type', 'checkbox'], 'checked', 'disabled']
  },
  required: { input: { type: 'checkbox', disabled: true } },
  clobber: [],
  protocols: {},
  ancestors: {},
  strip: []
}

/**
 * One walk: flattens past MAX_HTML_DEPTH, drops template content (never shown), keeps a mark only as an element's
 * first attribute with this render's value. The service writes its mark first; a raw element that swallows one of
 * its start tags (`<div` left open) has its own attributes first, so it never passes for the service's own.
 */
function prepare (fragment: Parse5Parent, mark: string): void {
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

function prepareElement (node: Parse5Parent, mark: string): void {
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
    if ('children' in node) for (let index = node.children.length - 1; index >= 0; index--) pending.push(node.children[index]!)
  }
}

/** Each mark that `prepare` kept becomes an index into the returned list. */
function setAsideOwnMarkup (tree: Root): Array<{ tagName: string, properties: Properties }> {
  const own: Array<{ tagName: string, properties: Properties }> = []
  for (const element of elementsOf(tree)) {
    if (element.properties[MARK_PROPERTY] === undefined) continue
    delete element.properties[MARK_PROPERTY]
    own.push({ tagName: element.tagName, properties: element.properties })
    element.tagName = 'span'
    element.properties = { [MARK_PROPERTY]: String(own.length - 1) }
  }
  return own
}

function putFragmentBack (place: Element, properties: Properties, fragments: readonly string[]): void {
  const index = String(properties.dataIndex)
  const fragment = /^\d+$/.test(index) ? fragments[Number(index)] : undefined
  // A `raw` node, written unsanitized (allowDangerousHtml below): the fragment is the service's own markup.
  const node = place as unknown as Record<string, unknown>
  for (const key of ['tagName', 'properties', 'children']) delete node[key]
  Object.assign(node, { type: 'raw', value: fragment ?? '' })
}

/** Through OWN_MARKUP_SCHEMA: one sanitize of them all, each childless, in order; own fragments as written. */
function putBack (places: Element[], own: Array<{ tagName: string, properties: Properties }>, fragments: readonly string[]): void {
  const ownTags = new Set(OWN_MARKUP_SCHEMA.tagNames)
  const ownOf = (place: Element): { tagName: string, properties: Properties } => own[Number(place.properties[MARK_PROPERTY])]!
  const fragmentPlaces = places.filter((place) => ownOf(place).tagName === OWN_FRAGMENT_TAG)
  const kept = places.filter((place) => ownTags.has(ownOf(place).tagName))
  for (const place of places) place.properties = { [MARK_PROPERTY]: place.properties[MARK_PROPERTY]! }
  const copies: Root = {
    type: 'root',
    children: kept.map((place) => ({ type: 'element', tagName: ownOf(place).tagName, properties: ownOf(place).properties, children: [] }))
  }
  const checked = (sanitize(copies, OWN_MARKUP_SCHEMA) as Root).children as Element[]
  kept.forEach((place, index) => {
    place.tagName = checked[index]!.tagName
    place.properties = checked[index]!.properties
  })
  for (const place of fragmentPlaces) putFragmentBack(place, ownOf(place).properties, fragments)
  for (const place of places) if (place.properties !== undefined) delete place.properties[MARK_PROPERTY]
}

/** Every piece between whitespace and commas must pass (`2x` does), so no reading of the list finds a refused URL. */
const isSafeSrcset = (srcset: string, isSafeUrl: UrlPolicy): boolean =>
  srcset.split(/[\t\n\f\r ,]+/).every((piece) => piece === '' || isSafeUrl(piece))

function applyUrlPolicy (element: Element, isSafeUrl: UrlPolicy): void {
  const { properties } = element
  for (const name of URL_PROPERTIES) {
    const value = properties[name]
    if (value !== undefined && !isSafeUrl(String(value))) delete properties[name]
  }
  if (properties.srcSet !== undefined && !isSafeSrcset(String(properties.srcSet), isSafeUrl)) delete properties.srcSet
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
    const id = [decoded, decoded.toLowerCase()].map((name) => 'user-content-' + name).find((name) => rawIds.has(name))
    if (id !== undefined) link.properties.href = '#' + encodeURIComponent(id)
  }
}

/** `html` from render.ts, its own markup marked `mark`, as github.com shows it. */
export function githubHtml (html: string, mark: string, isSafeUrl: UrlPolicy, fragments: readonly string[] = []): string {
  const fragment = parseFragment(html)
  prepare(fragment, mark)
  const tree = fromParse5(fragment) as Root
  const own = setAsideOwnMarkup(tree)
  const clean = sanitize(tree, RAW_HTML_SCHEMA) as Root
  const rawIds = new Set<string>()
  const fragmentLinks: Element[] = []
  const ownPlaces: Element[] = []
  for (const element of elementsOf(clean)) {
    if (element.properties[MARK_PROPERTY] !== undefined) {
      ownPlaces.push(element)
      continue
    }
    applyUrlPolicy(element, isSafeUrl)
    for (const name of [element.properties.id, element.properties.name]) if (typeof name === 'string') rawIds.add(name)
    const href = element.properties.href
    if (element.tagName === 'a' && typeof href === 'string' && href.startsWith('#') && !href.startsWith('#user-content-')) fragmentLinks.push(element)
  }
  putBack(ownPlaces, own, fragments)
  if (rawIds.size > 0) linkToRawAnchors(fragmentLinks, rawIds)
  // Safe: the only raw nodes are the own fragments put back; the parser never makes one.
  return toHtml(clean, { closeSelfClosing: true, characterReferences: { useNamedReferences: true }, allowDangerousHtml: true })
}
