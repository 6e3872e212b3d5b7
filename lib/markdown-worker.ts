import { move } from 'piscina'
import { renderSafeMarkdown } from './markdown.js'

/**
 * The task of plugins/markdown-renderer.ts's worker threads: one render per task, answered as
 * the route's JSON body, `{"data":"<html>"}` in UTF-8. A large document's HTML runs to megabytes:
 * encoded here and moved (not copied) to the event loop, it costs that loop no serialization,
 * no length count and no encoding, only the socket write. TextEncoder's array owns its memory
 * (a small Buffer shares Node's pool, which moving would take away from this thread).
 */
export default function render (source: string): Uint8Array {
  return move(new TextEncoder().encode(JSON.stringify({ data: renderSafeMarkdown(source) }))) as Uint8Array
}
