/** Heading ids prefixed `user-content-` as on GitHub; a link to a heading or footnote points at the real id. */
import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'
import GithubSlugger from 'github-slugger'
import { footnoteIdsOf, ID_PREFIX } from './footnotes.js'
import { isShownAsText } from './raw-html.js'

/** The text a heading's id is made from: its text and code, emoji by name, markup (raw HTML's too) left out. */
function headingText (inline: Token): string {
  let text = ''
  for (const child of inline.children ?? []) {
    if (child.type === 'text' || child.type === 'code_inline') text += child.content
    else if (child.type === 'emoji') text += `:${child.markup}:`
    else if (child.type === 'html_inline' && isShownAsText(child.content)) text += child.content
    else if (child.type === 'softbreak' || child.type === 'hardbreak') text += ' '
  }
  return text
}

/** A fragment as written (percent-encoded by markdown-it), as the id it names; null if it cannot be decoded. */
function decodedFragment (fragment: string): string | null {
  try {
    return decodeURIComponent(fragment)
  } catch {
    return null
  }
}

/** The id a fragment names: as written, decoded, or decoded in lower case, as GitHub's script tries them. */
function namedId (fragment: string, headings: ReadonlySet<string>, footnotes: ReadonlySet<string>): string | undefined {
  const decoded = decodedFragment(fragment)
  return [fragment, decoded, decoded?.toLowerCase()]
    .find((id): id is string => id != null && (headings.has(id) || footnotes.has(id)))
}

/** In one pass: each heading's id, and the links to a fragment; then those links pointed at the ids they name. */
function linkInDocument (md: MarkdownIt, state: StateCore): void {
  const footnotes = footnoteIdsOf(state.env)
  const headings = new Set<string>()
  const slugger = new GithubSlugger()
  // The footnotes' heading keeps its id: a heading of the same text gets the next one.
  if (footnotes.size > 0) slugger.slug('footnote-label')
  const fragmentLinks: Token[] = []
  const { tokens } = state
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!
    if (token.type === 'heading_open') {
      const id = slugger.slug(headingText(tokens[index + 1]!))
      headings.add(id)
      token.attrSet('id', ID_PREFIX + id)
    } else if (token.type === 'inline') {
      for (const child of token.children ?? []) {
        if (child.type === 'link_open' && child.attrGet('href')?.startsWith('#') === true) fragmentLinks.push(child)
      }
    }
  }
  for (const link of fragmentLinks) {
    const id = namedId(link.attrGet('href')!.slice(1), headings, footnotes)
    if (id !== undefined) link.attrSet('href', '#' + ID_PREFIX + md.utils.lib.mdurl.encode(id))
  }
}

export function headingAnchors (md: MarkdownIt): void {
  md.core.ruler.push('heading_anchors', (state) => { linkInDocument(md, state) })
}
