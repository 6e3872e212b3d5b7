import type MarkdownIt from 'markdown-it'
import { wrapBlockRule } from './wrap-block-rule.js'

/**
 * Table cells per document. GitHub tables pad short rows with empty cells, so 2 KB of table
 * (a 256-column header, then one-letter lines) expands to 65,536 cells, markdown-it's own cap
 * per table: 1 MiB of such tables would be hundreds of MB of output. Past this budget a table
 * renders as text, which keeps the output linear in the input.
 */
export const MAX_TABLE_CELLS = 100_000

/** What a render has left, kept in markdown-it's per-render `env`. */
interface TableCellBudget { tableCellsLeft?: number }

/** markdown-it's table rule, counted against a per-render budget of cells. */
export function budgetPaddedTableCells (md: MarkdownIt): void {
  wrapBlockRule(md, 'table', ['paragraph', 'reference'], (table) => (state, startLine, endLine, silent) => {
    const budget = state.env as TableCellBudget
    budget.tableCellsLeft ??= MAX_TABLE_CELLS
    if (budget.tableCellsLeft <= 0) return false
    const firstNewToken = state.tokens.length
    const matched = table(state, startLine, endLine, silent)
    for (let index = firstNewToken; index < state.tokens.length; index++) {
      const type = state.tokens[index]!.type
      if (type === 'td_open' || type === 'th_open') budget.tableCellsLeft--
    }
    return matched
  })
}
