/**
 * KaTeX's MathML made plain MathML the service vouches for: only MathML's own elements and
 * presentation attributes are kept, so no command can add a link, class, style, id, data
 * attribute or image, whatever KaTeX allows (its `\href`, `\htmlClass`, `\includegraphics`… are
 * off, `trust: false`, and this holds even if one were on). An element outside the list is
 * left out with its tags, its content kept (KaTeX's `<span class="katex">` wrapper).
 *
 * KaTeX writes every tag as `<name attr="value">` with each value and every text escaped, so a
 * tokenizer of that one form reads it whole; a `<` it cannot read is written as text.
 */

const MATHML_NAMESPACE = 'http://www.w3.org/1998/Math/MathML'

const ELEMENTS = new Set([
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'msup', 'msub', 'msubsup',
  'mfrac', 'msqrt', 'mroot', 'mover', 'munder', 'munderover', 'mtable', 'mtr', 'mtd', 'mstyle', 'mpadded', 'mphantom',
  'menclose', 'merror', 'mmultiscripts', 'mprescripts', 'none'
])

const PLAIN_VALUE = /^[\w\s.#%+,()-]*$/
const ATTRIBUTES: ReadonlyMap<string, RegExp> = new Map([
  ...['width', 'height', 'depth', 'voffset', 'lspace', 'rspace', 'minsize', 'maxsize', 'mathsize', 'linethickness',
    'columnspacing', 'rowspacing', 'columnlines', 'rowlines', 'columnalign', 'rowalign', 'scriptlevel', 'displaystyle',
    'mathvariant', 'mathcolor', 'mathbackground', 'notation', 'fence', 'stretchy', 'separator', 'largeop', 'accent',
    'accentunder', 'linebreak', 'movablelimits', 'symmetric', 'form'].map((name) => [name, PLAIN_VALUE] as const),
  ['display', /^(?:block|inline)$/],
  ['encoding', /^application\/x-tex$/],
  ['xmlns', new RegExp(`^${MATHML_NAMESPACE.replaceAll('.', '\\.')}$`)]
])

const TAG = /<(\/?)([a-z]+)((?: [a-z-]+="[^"<>]*")*)(\/?)>/y
const ATTRIBUTE = / ([a-z-]+)="([^"]*)"/g

function keptAttributes (attributes: string): string {
  let kept = ''
  for (const [whole, name, value] of attributes.matchAll(ATTRIBUTE)) {
    if (ATTRIBUTES.get(name!)?.test(value!) === true) kept += whole
  }
  return kept
}

/** `html`, KaTeX's MathML output, with only the MathML elements and attributes above. */
export function safeMathml (html: string): string {
  let safe = ''
  let position = 0
  for (let open = html.indexOf('<'); open !== -1; open = html.indexOf('<', position)) {
    safe += html.slice(position, open)
    TAG.lastIndex = open
    const tag = TAG.exec(html)
    if (tag === null) {
      safe += '&lt;'
      position = open + 1
      continue
    }
    const [whole, closing, name, attributes, selfClosing] = tag
    if (ELEMENTS.has(name!)) safe += closing === '' ? `<${name}${keptAttributes(attributes!)}${selfClosing}>` : `</${name}>`
    position = open + whole.length
  }
  return safe + html.slice(position)
}
