import type MarkdownIt from 'markdown-it'
import type { StateInline } from 'markdown-it'

export type InlineRule = (state: StateInline, silent: boolean) => boolean

/** As wrapBlockRule (wrap-block-rule.ts), for an inline rule: `name` replaced by `wrap(original)`, the name kept. */
export function wrapInlineRule (md: MarkdownIt, name: string, wrap: (original: InlineRule) => InlineRule): void {
  const original = md.inline.ruler.getRules('').find((rule) => rule.name === name)
  if (original === undefined) throw new Error(`markdown-it has no ${name} rule enabled`)
  md.inline.ruler.at(name, Object.defineProperty(wrap(original), 'name', { value: name }))
}
