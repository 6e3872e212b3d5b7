/**
 * GitHub's alerts, by @mdit/plugin-alert: a top-level block quote whose first line is `[!NOTE]`, `[!TIP]`,
 * `[!IMPORTANT]`, `[!WARNING]` or `[!CAUTION]` alone (any case), followed by content; anything else stays a quote.
 * Without GitHub's octicon: SVG is no element this renderer emits (it can hold script); a style sheet may add it.
 */
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
