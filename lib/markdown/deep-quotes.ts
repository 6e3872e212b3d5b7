import type MarkdownIt from 'markdown-it'
import type { StateBlock } from 'markdown-it'

/**
 * Deepest block quote. markdown-it's block-quote rule reads every line of a quote once per
 * open quote, checking each lazy continuation line (`z` after `> > > a`) against the rules that
 * could end it; those lines carry no `>` markers, so the work grows with the depth while the
 * input does not: 1 MiB of one-letter lazy lines under `maxNesting` (20) quotes takes seconds.
 * Past this depth a `>` is text, in the deepest quote's paragraph, and nothing is left out.
 */
export const MAX_BLOCKQUOTE_DEPTH = 6

type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean

/** How deep the block-quote rule is nested, kept in markdown-it's per-render `env`. */
interface QuoteDepth { blockquoteDepth?: number }

/** markdown-it's block-quote rule, refused past MAX_BLOCKQUOTE_DEPTH nested quotes. */
export function limitDeepQuotes (md: MarkdownIt): void {
  // The ruler hands out its active rule functions (`getRules`), not their names: markdown-it's is `blockquote`.
  const blockquote = md.block.ruler.getRules('').find((rule) => rule.name === 'blockquote') as BlockRule | undefined
  if (blockquote === undefined) throw new Error('markdown-it has no blockquote rule enabled')
  md.block.ruler.at('blockquote', (state, startLine, endLine, silent) => {
    const depth = state.env as QuoteDepth
    const outer = depth.blockquoteDepth ?? 0
    if (outer >= MAX_BLOCKQUOTE_DEPTH) return false
    depth.blockquoteDepth = outer + 1
    try {
      return blockquote(state, startLine, endLine, silent)
    } finally {
      depth.blockquoteDepth = outer
    }
  }, { alt: ['paragraph', 'reference', 'blockquote', 'list'] })
}
