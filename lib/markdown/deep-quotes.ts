import type MarkdownIt from 'markdown-it'
import { wrapBlockRule } from './wrap-block-rule.js'

/**
 * Deepest block quote. markdown-it's block-quote rule reads every line of a quote once per
 * open quote, checking each lazy continuation line (`z` after `> > > a`) against the rules that
 * could end it; those lines carry no `>` markers, so the work grows with the depth while the
 * input does not: 1 MiB of one-letter lazy lines under `maxNesting` (20) quotes takes seconds.
 * Past this depth a `>` is text, in the deepest quote's paragraph, and nothing is left out.
 */
export const MAX_BLOCKQUOTE_DEPTH = 6

/** How deep the block-quote rule is nested, kept in markdown-it's per-render `env`. */
interface QuoteDepth { blockquoteDepth?: number }

/** markdown-it's block-quote rule, refused past MAX_BLOCKQUOTE_DEPTH nested quotes. */
export function limitDeepQuotes (md: MarkdownIt): void {
  wrapBlockRule(md, 'blockquote', ['paragraph', 'reference', 'blockquote', 'list'], (blockquote) =>
    (state, startLine, endLine, silent) => {
      const depth = state.env as QuoteDepth
      const outer = depth.blockquoteDepth ?? 0
      if (outer >= MAX_BLOCKQUOTE_DEPTH) return false
      depth.blockquoteDepth = outer + 1
      try {
        return blockquote(state, startLine, endLine, silent)
      } finally {
        depth.blockquoteDepth = outer
      }
    })
}
