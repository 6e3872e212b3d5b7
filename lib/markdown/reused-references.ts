import type MarkdownIt from 'markdown-it'
import type { RendererRule, Token } from 'markdown-it'

/** Link and image attributes may total this many times the source: a reference reused copies its URL each time. */
export const LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR = 10

const LINK_ATTRIBUTES = new Set(['href', 'src', 'title'])

interface LinkAttributeBudget { linkAttributeCharsLeft: number }

function charge (token: Token, budget: LinkAttributeBudget): void {
  if (token.attrs === null) return
  for (const [name, value] of token.attrs) {
    if (LINK_ATTRIBUTES.has(name)) budget.linkAttributeCharsLeft -= value.length
  }
  if (budget.linkAttributeCharsLeft < 0) token.attrs = token.attrs.filter(([name]) => !LINK_ATTRIBUTES.has(name))
}

/** Counted in the link and image renderer rules, so a document without them pays nothing. */
export function budgetReusedReferences (md: MarkdownIt): void {
  md.core.ruler.push('budget_reused_references', (state) => {
    (state.env as LinkAttributeBudget).linkAttributeCharsLeft = state.src.length * LINK_ATTRIBUTE_BUDGET_PER_SOURCE_CHAR
  })
  const rules = md.renderer.rules
  const renderImage = rules.image!
  const renderLinkOpen: RendererRule = rules.link_open ??
    ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options))
  rules.link_open = (tokens, index, options, env, self) => {
    charge(tokens[index]!, env as LinkAttributeBudget)
    return renderLinkOpen(tokens, index, options, env, self)
  }
  rules.image = (tokens, index, options, env, self) => {
    charge(tokens[index]!, env as LinkAttributeBudget)
    return renderImage(tokens, index, options, env, self)
  }
}
