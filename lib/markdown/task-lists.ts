/** GFM's task list items (spec 0.29): `[ ]`, `[x]` or `[X]` and whitespace opening an item's first paragraph. */
import type MarkdownIt from 'markdown-it'
import type { StateCore } from 'markdown-it'
import { ownMarkAttribute } from './raw-html.js'

const TASK_MARKER = /^\[([ \txX])\](?=[ \t\n])/

function markTaskListItems (state: StateCore): void {
  const { tokens } = state
  for (let index = 2; index < tokens.length; index++) {
    const inline = tokens[index]!
    if (inline.type !== 'inline' || tokens[index - 1]!.type !== 'paragraph_open' ||
      tokens[index - 2]!.type !== 'list_item_open') continue
    const first = inline.children?.[0]
    const marker = first?.type === 'text' ? TASK_MARKER.exec(first.content) : null
    if (first === undefined || marker === null) continue
    const checkbox = new state.Token('task_checkbox', 'input', 0)
    checkbox.meta = { checked: marker[1] === 'x' || marker[1] === 'X' }
    first.content = first.content.slice(marker[0].length)
    inline.children!.unshift(checkbox)
  }
}

export function taskLists (md: MarkdownIt): void {
  md.core.ruler.after('inline', 'task_lists', markTaskListItems)
  md.renderer.rules.task_checkbox = (tokens, index, _options, env) =>
    `<input${ownMarkAttribute(env)} type="checkbox"` +
    `${(tokens[index]!.meta as { checked: boolean }).checked ? ' checked=""' : ''} disabled="" />`
}
