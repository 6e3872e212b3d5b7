/** Which documents render on the event loop, by the source alone; the fair share charges render places by the same. */

/** The slowest shape is quick at this size (docs/performance.md, "The figures behind the code's constants"). */
export const MAX_EVENT_LOOP_RENDER_LENGTH = 8192
/** Tables pad short rows to the header's width: a document that could hold more cells goes to a thread. */
const MAX_EVENT_LOOP_TABLE_CELLS = 4096
/** Each formula costs KaTeX and the sanitizer a set-up, so a small document full of them goes to a thread too. */
const MAX_EVENT_LOOP_DOLLARS = 128

function holdsMoreDollarsThan (source: string, limit: number): boolean {
  let count = 0
  for (let dollar = source.indexOf('$'); dollar !== -1; dollar = source.indexOf('$', dollar + 1)) {
    if (++count > limit) return true
  }
  return false
}

/** Whether `source` renders in a few milliseconds at most, so the event loop may do it. */
export function rendersQuickly (source: string): boolean {
  if (source.length > MAX_EVENT_LOOP_RENDER_LENGTH) return false
  if (holdsMoreDollarsThan(source, MAX_EVENT_LOOP_DOLLARS)) return false
  // A table needs a `|` on its header line: without one, there are no cells to pad.
  return !source.includes('|') || possibleTableCells(source) <= MAX_EVENT_LOOP_TABLE_CELLS
}

/** Lines (ended by LF or CR) times one more than the most `|` on a line; `indexOf` scans natively, a loop would not. */
export function possibleTableCells (source: string): number {
  let lines = 1
  let widest = 0
  let pipesOnLine = 0
  let pipe = source.indexOf('|')
  let newline = source.indexOf('\n')
  let carriageReturn = source.indexOf('\r')
  for (;;) {
    const lineEnd = newline === -1
      ? carriageReturn
      : carriageReturn === -1 ? newline : Math.min(newline, carriageReturn)
    if (pipe !== -1 && (lineEnd === -1 || pipe < lineEnd)) {
      pipesOnLine++
      pipe = source.indexOf('|', pipe + 1)
    } else if (lineEnd === -1) {
      return lines * (Math.max(widest, pipesOnLine) + 1)
    } else {
      lines++
      widest = Math.max(widest, pipesOnLine)
      pipesOnLine = 0
      if (lineEnd === newline) newline = source.indexOf('\n', lineEnd + 1)
      else carriageReturn = source.indexOf('\r', lineEnd + 1)
    }
  }
}
