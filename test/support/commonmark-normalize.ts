import { parseFragment } from 'parse5'

/**
 * A TypeScript port of `normalize_html` from the CommonMark spec's test runner
 * (commonmark-spec, test/normalize.py), so that spec examples compare as the official runner
 * compares them:
 *
 * - runs of whitespace collapse to one space, except inside <pre>;
 * - whitespace next to block-level tags is removed;
 * - self-closing tags become open tags (`<br />` → `<br>`);
 * - attributes are sorted, and their names lowercased;
 * - character references become characters, except `<`, `>`, `&` and `"`, which become entities.
 *
 * Like the Python, it reads the HTML as a flat list of tags and text (no tree is built).
 * href and src values are compared as they are: the Python means to re-quote them, but its
 * test (`v in ['href', 'src']`) looks at the value instead of the name and never fires.
 */

const BLOCK_TAGS = new Set([
  'article', 'header', 'aside', 'hgroup', 'blockquote', 'hr', 'iframe', 'body', 'li', 'map', 'button',
  'object', 'canvas', 'ol', 'caption', 'output', 'col', 'p', 'colgroup', 'pre', 'dd', 'progress', 'div',
  'section', 'dl', 'table', 'td', 'dt', 'tbody', 'embed', 'textarea', 'fieldset', 'tfoot', 'figcaption',
  'th', 'figure', 'thead', 'footer', 'tr', 'form', 'ul', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'video',
  'script', 'style'
])

const CHUNK = /<!\[CDATA\[[\s\S]*?\]\]>|<[^>]*>|[^<]+/g
const CHARACTER_REFERENCE = /&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][-.a-zA-Z0-9]*);?/g
const START_TAG = /^<([a-zA-Z][^\s/>]*)([\s\S]*?)(\/?)>$/
const END_TAG = /^<\/([a-zA-Z][^\s/>]*)\s*>$/
const ATTRIBUTE = /([^\s/>="']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g
const WHITESPACE_RUN = /\s+/g

/** The character a reference stands for, as a browser reads it; null when it stands for none. */
function decodeReference (reference: string): string | null {
  const node = parseFragment(reference).childNodes[0]
  const text = node !== undefined && 'value' in node ? node.value : reference
  return text === reference ? null : text
}

function decodeReferences (value: string): string {
  return value.replace(CHARACTER_REFERENCE, (reference) => decodeReference(reference) ?? reference)
}

function escapeAttribute (value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;').replaceAll('\'', '&#x27;')
}

type Last = 'starttag' | 'endtag' | 'data' | 'ref' | 'comment' | 'decl' | 'pi'

class Normalizer {
  output = ''
  private last: Last = 'starttag'
  private lastTag = ''
  private inPre = false

  data (text: string): void {
    const afterTag = this.last === 'endtag' || this.last === 'starttag'
    const afterBlockTag = afterTag && BLOCK_TAGS.has(this.lastTag)
    let data = text
    if (afterTag && this.lastTag === 'br') data = data.replace(/^\n+/, '')
    if (!this.inPre) data = data.replace(WHITESPACE_RUN, ' ')
    if (afterBlockTag && !this.inPre) {
      if (this.last === 'starttag') data = data.trimStart()
      else data = data.trim()
    }
    this.output += data
    this.last = 'data'
  }

  reference (reference: string): void {
    const character = decodeReference(reference)
    const entities: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }
    this.output += character === null ? reference : (entities[character] ?? character)
    this.last = 'ref'
  }

  startTag (tag: string, attributes: Array<[string, string | null]>, selfClosing: boolean): void {
    if (tag === 'pre') this.inPre = true
    if (BLOCK_TAGS.has(tag)) this.output = this.output.trimEnd()
    this.output += '<' + tag
    const sorted = [...attributes].sort(([a, av], [b, bv]) => a < b ? -1 : a > b ? 1 : (av ?? '') < (bv ?? '') ? -1 : 1)
    for (const [name, value] of sorted) {
      this.output += ' ' + name + (value === null ? '' : `="${escapeAttribute(value)}"`)
    }
    this.output += '>'
    this.lastTag = tag
    this.last = selfClosing ? 'endtag' : 'starttag'
  }

  endTag (tag: string): void {
    if (tag === 'pre') this.inPre = false
    else if (BLOCK_TAGS.has(tag)) this.output = this.output.trimEnd()
    this.output += `</${tag}>`
    this.lastTag = tag
    this.last = 'endtag'
  }

  verbatim (markup: string, kind: Last): void {
    this.output += markup
    this.last = kind
  }

  text (chunk: string): void {
    let position = 0
    for (const match of chunk.matchAll(CHARACTER_REFERENCE)) {
      if (match.index > position) this.data(chunk.slice(position, match.index))
      this.reference(match[0])
      position = match.index + match[0].length
    }
    if (position < chunk.length) this.data(chunk.slice(position))
  }

  markup (chunk: string): void {
    if (chunk.startsWith('<![CDATA[')) return this.verbatim(chunk, 'decl')
    if (chunk.startsWith('<!--')) return this.verbatim(chunk, 'comment')
    if (chunk.startsWith('<!')) return this.verbatim(chunk, 'decl')
    if (chunk.startsWith('<?')) return this.verbatim(chunk, 'pi')
    const end = END_TAG.exec(chunk)
    if (end?.[1] !== undefined) return this.endTag(end[1].toLowerCase())
    const start = START_TAG.exec(chunk)
    if (start?.[1] === undefined) return this.text(chunk)
    const attributes: Array<[string, string | null]> = []
    for (const attribute of (start[2] ?? '').matchAll(ATTRIBUTE)) {
      const value = attribute[2] ?? attribute[3] ?? attribute[4]
      attributes.push([attribute[1]!.toLowerCase(), value === undefined ? null : decodeReferences(value)])
    }
    this.startTag(start[1].toLowerCase(), attributes, start[3] === '/')
  }
}

/** HTML in a form where insignificant differences (see above) are gone. */
export function normalizeHtml (html: string): string {
  const normalizer = new Normalizer()
  for (const [chunk] of html.matchAll(CHUNK)) {
    if (chunk.startsWith('<')) normalizer.markup(chunk)
    else normalizer.text(chunk)
  }
  return normalizer.output
}

const HIGHLIGHT_SPAN = /<span class="hljs-[^"]*">([^<]*)<\/span>/g

/**
 * The HTML without what this service adds that the CommonMark and GFM specs do not have: the ids
 * it gives headings (GitHub's `user-content-` slugs) and highlight.js's token spans in code
 * blocks, innermost first, their text kept. The conformance tests compare everything else.
 */
export function withoutServiceAdditions (html: string): string {
  let plain = html.replace(/(<h[1-6]) id="user-content-[^"]*"/g, '$1')
  for (let unwrapped = plain.replace(HIGHLIGHT_SPAN, '$1'); unwrapped !== plain; unwrapped = plain.replace(HIGHLIGHT_SPAN, '$1')) plain = unwrapped
  return plain
}
