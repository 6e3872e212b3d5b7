import type MarkdownIt from 'markdown-it'
import { wrapInlineRule } from './wrap-inline-rule.js'

/**
 * Footnote references per document. Each `[^a]` (4 characters) renders to about 360 characters of
 * GitHub's HTML (the reference and its back-reference), so 1 MiB of them was 79 MB of output.
 * Past this many, a reference stays text, as one without a definition does: the output stays
 * within a few MB more than the input, and nothing is left out.
 */
export const MAX_FOOTNOTE_REFERENCES = 10_000

/** What a render has left, kept in markdown-it's per-render `env`. */
interface FootnoteReferenceBudget { footnoteReferencesLeft?: number }

/** markdown-it-footnote's reference rule, counted against a per-render budget. */
export function budgetFootnoteReferences (md: MarkdownIt): void {
  wrapInlineRule(md, 'footnote_ref', (reference) => (state, silent) => {
    const budget = state.env as FootnoteReferenceBudget
    budget.footnoteReferencesLeft ??= MAX_FOOTNOTE_REFERENCES
    if (budget.footnoteReferencesLeft <= 0 || !reference(state, silent)) return false
    if (!silent) budget.footnoteReferencesLeft--
    return true
  })
}
