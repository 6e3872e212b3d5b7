import type MarkdownIt from 'markdown-it'
import type { StateCore } from 'markdown-it'

/**
 * Link and image attributes (href, src, title) may total this many times the source length.
 * A reference definition can be used any number of times, each use copying its URL and title
 * (`[r]: /<500 KB>` then `[r][r][r]…`): 1 MiB of it is more HTML than a string can hold. Past the
 * budget, links and images keep only their text.
 */
export const LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR = 10

const LINK_ATTRIBUTES = new Set(['href', 'src', 'title'])

/** Core rule after the inline parse: strips link attributes once the document's budget is spent. */
function limitLinkAttributes (state: StateCore): void {
  let charsLeft = state.src.length * LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR
  for (const block of state.tokens) {
    for (const token of block.children ?? []) {
      if ((token.type !== 'link_open' && token.type !== 'image') || token.attrs === null) continue
      for (const [name, value] of token.attrs) {
        if (LINK_ATTRIBUTES.has(name)) charsLeft -= value.length
      }
      if (charsLeft < 0) token.attrs = token.attrs.filter(([name]) => !LINK_ATTRIBUTES.has(name))
    }
  }
}

export function budgetReusedReferences (md: MarkdownIt): void {
  md.core.ruler.push('budget_reused_references', limitLinkAttributes)
}
