import type MarkdownIt from 'markdown-it'
import type { StateBlock } from 'markdown-it'

export type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean

/**
 * Replaces markdown-it's block rule `name` by `wrap(original)`, through the public ruler: the
 * ruler hands out its active rule functions (`getRules`), which carry markdown-it's rule names.
 * `alt` lists the rules the replacement may interrupt, as markdown-it's own declaration does.
 * The replacement carries the name too, so that a rule can be wrapped again.
 */
export function wrapBlockRule (
  md: MarkdownIt,
  name: string,
  alt: string[],
  wrap: (original: BlockRule) => BlockRule
): void {
  const original = md.block.ruler.getRules('').find((rule) => rule.name === name) as BlockRule | undefined
  if (original === undefined) throw new Error(`markdown-it has no ${name} rule enabled`)
  md.block.ruler.at(name, Object.defineProperty(wrap(original), 'name', { value: name }), { alt })
}
