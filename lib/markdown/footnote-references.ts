import type MarkdownIt from 'markdown-it'
import { wrapInlineRule } from './wrap-inline-rule.js'

/** Footnote references per document; past it one stays text: each renders to many times its size in GitHub's HTML. */
export const MAX_FOOTNOTE_REFERENCES = 10_000

interface FootnoteReferenceBudget { footnoteReferencesLeft?: number }

export function budgetFootnoteReferences (md: MarkdownIt): void {
  wrapInlineRule(md, 'footnote_ref', (reference) => (state, silent) => {
    const budget = state.env as FootnoteReferenceBudget
    budget.footnoteReferencesLeft ??= MAX_FOOTNOTE_REFERENCES
    if (budget.footnoteReferencesLeft <= 0 || !reference(state, silent)) return false
    if (!silent) budget.footnoteReferencesLeft--
    return true
  })
}
