import type MarkdownIt from 'markdown-it'
import type { StateBlock } from 'markdown-it'

export type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean

/** Replaces block rule `name` by `wrap(original)`, interrupting `alt`; the name is kept, so it can be wrapped again. */
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
