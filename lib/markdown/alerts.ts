/**
 * GitHub's alerts, by @mdit/plugin-alert: a block quote of the document (not nested in another
 * block, as on GitHub) whose first line is `[!NOTE]`, `[!TIP]`, `[!IMPORTANT]`, `[!WARNING]` or
 * `[!CAUTION]` alone, in any case, followed by content, is
 * `<div class="markdown-alert markdown-alert-note"><p class="markdown-alert-title">Note</p>…</div>`.
 * Anything else (another word, text after the marker, no content) stays a block quote.
 *
 * GitHub puts an octicon (inline SVG) before the title; SVG is no element this renderer emits
 * (it can hold script), so the title is the word alone and a page's style sheet may add the icon.
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
