import { renderSafeMarkdown } from './markdown.js'

/** The task of plugins/markdown-renderer.ts's worker threads: one render per task. */
export default function render (source: string): string {
  return renderSafeMarkdown(source)
}
