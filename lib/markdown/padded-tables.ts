import type MarkdownIt from 'markdown-it'
import { wrapBlockRule } from './wrap-block-rule.js'

/** Table cells per document: GitHub pads short rows, so 2 KB of table can be 65,536 cells; past it a table is text. */
export const MAX_TABLE_CELLS = 100_000

interface TableCellBudget { tableCellsLeft?: number }

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
