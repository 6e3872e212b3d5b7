/**
 * Which documents render on the event loop and which in a render thread (plugins/app/markdown-renderer.ts), by what the
 * source alone says: the fair share (plugins/app/fair-share.ts) charges a render place by the same bounds.
 */

/**
 * Documents up to this many characters render on the event loop, where they cost no hand-off to a
 * thread, since even the slowest shape takes a few milliseconds at this size (docs/performance.md, "Render threads").
 */
export const MAX_EVENT_LOOP_RENDER_LENGTH = 8192
/**
 * A table pads each short row to its header's width, so a few KB of table can be tens of thousands of
 * cells: a document that could hold more (lines × the most `|` on a line) goes to a thread whatever its size.
 */
const MAX_EVENT_LOOP_TABLE_CELLS = 4096
/**
 * Formulas cost KaTeX and the sanitizer tens of microseconds each, so a small document full of them
 * goes to a thread too.
 */
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

/**
 * Lines (ended by LF or CR) times one more than the most `|` on a line. Found with `indexOf`,
 * which scans natively: a loop over every character cost more than a 5 KB document's parse.
 */
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
