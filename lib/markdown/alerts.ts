/** GitHub's alerts (@mdit/plugin-alert), without the octicon: this renderer emits no SVG (it can hold script). */
import type MarkdownIt from 'markdown-it'
import { alert } from '@mdit/plugin-alert'
import { ownMarkAttribute } from './raw-html.js'

const TITLES: Record<string, string> = {
  note: 'Note',
  tip: 'Tip',
  important: 'Important',
  warning: 'Warning',
  caution: 'Caution'
}

export function githubAlerts (md: MarkdownIt): void {
  md.use(alert, {
    alertNames: Object.keys(TITLES),
    // The plugin names the kind as the marker is written (`[!note]` would be "Note", `[!NOTE]` "NOTE").
    titleRender: (tokens, index, _options, env) =>
      `<p${ownMarkAttribute(env)} class="markdown-alert-title">` +
      `${TITLES[tokens[index]!.markup.toLowerCase()] ?? ''}</p>\n`
  })
}
