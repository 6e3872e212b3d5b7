import type MarkdownIt from 'markdown-it'
import { wrapBlockRule, type BlockRule } from './wrap-block-rule.js'

/** markdown-it drops the rest of the input past `maxNesting`: these rules refuse before their content reaches it. */
const LEVELS_TO_CONTENT = { list: 2, blockquote: 1, footnoteDefinition: 1 }

function refusedTooDeep (rule: BlockRule, levelsToContent: number): BlockRule {
  return (state, startLine, endLine, silent) => {
    // A line outdented from a deeper paragraph or quote belongs to a shallower container, which may end it as ever.
    const outdented = silent && state.sCount[startLine]! < state.blkIndent
    const maxNesting = (state.md.options as { maxNesting: number }).maxNesting
    if (!outdented && state.level + levelsToContent >= maxNesting) return false
    return rule(state, startLine, endLine, silent)
  }
}

export function flattenDeepContainers (md: MarkdownIt): void {
  wrapBlockRule(md, 'list', ['paragraph', 'reference', 'blockquote'], (list) =>
    refusedTooDeep(list, LEVELS_TO_CONTENT.list))
  wrapBlockRule(md, 'blockquote', ['paragraph', 'reference', 'blockquote', 'list'], (blockquote) =>
    refusedTooDeep(blockquote, LEVELS_TO_CONTENT.blockquote))
  wrapBlockRule(md, 'footnote_def', ['paragraph', 'reference'], (definition) =>
    refusedTooDeep(definition, LEVELS_TO_CONTENT.footnoteDefinition))
}
