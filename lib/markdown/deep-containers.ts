import type MarkdownIt from 'markdown-it'
import { wrapBlockRule, type BlockRule } from './wrap-block-rule.js'

/**
 * Containers too deep for markdown-it's `maxNesting`. Its block parser gives up on a block at
 * that many token levels and skips to the end of the input, so a list nested 30 deep, then a
 * paragraph, rendered 9 of its 32 words. Only three rules parse blocks deeper than their own
 * level: a list parses its items' content two levels down (list, item), a block quote and a
 * footnote definition one (GitHub's alerts are never nested, so never near the bound).
 * Each is refused where that content would reach `maxNesting`, so the parser never gets there:
 * the line is then text, markers and all, in the paragraph of the deepest container that fits.
 */
const LEVELS_TO_CONTENT = { list: 2, blockquote: 1, footnoteDefinition: 1 }

function refusedTooDeep (rule: BlockRule, levelsToContent: number): BlockRule {
  return (state, startLine, endLine, silent) => {
    // Asked whether a line ends a deeper paragraph or quote: a line outdented from it belongs to a
    // shallower container, which parses it at its own level, so it may end it as ever.
    const outdented = silent && state.sCount[startLine]! < state.blkIndent
    const maxNesting = (state.md.options as { maxNesting: number }).maxNesting
    if (!outdented && state.level + levelsToContent >= maxNesting) return false
    return rule(state, startLine, endLine, silent)
  }
}

/**
 * markdown-it's list and block-quote rules and the footnote definitions' rule, refused where their
 * content would reach `maxNesting`.
 */
export function flattenDeepContainers (md: MarkdownIt): void {
  wrapBlockRule(md, 'list', ['paragraph', 'reference', 'blockquote'], (list) =>
    refusedTooDeep(list, LEVELS_TO_CONTENT.list))
  wrapBlockRule(md, 'blockquote', ['paragraph', 'reference', 'blockquote', 'list'], (blockquote) =>
    refusedTooDeep(blockquote, LEVELS_TO_CONTENT.blockquote))
  wrapBlockRule(md, 'footnote_def', ['paragraph', 'reference'], (definition) =>
    refusedTooDeep(definition, LEVELS_TO_CONTENT.footnoteDefinition))
}
