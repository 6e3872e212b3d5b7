import type MarkdownIt from 'markdown-it'
import { wrapBlockRule } from './wrap-block-rule.js'

/** The block-quote rule rereads lazy lines once per open quote, so work grows with depth; past it `>` is text. */
export const MAX_BLOCKQUOTE_DEPTH = 6

interface QuoteDepth { blockquoteDepth?: number }

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
