import { move } from 'piscina'
import { renderSafeMarkdown, type MarkdownFeatures } from './render.js'
import type { MarkdownHtml } from '../../schemas/markdown.js'

/**
 * The route's 200 answer: `{ data }`, for Fastify to serialize, or, from a thread, the same JSON
 * already encoded (renderTask says why).
 */
export type RenderedMarkdown = MarkdownHtml | Uint8Array

export interface RenderTask { source: string, features: MarkdownFeatures }

/**
 * The task of markdown-renderer.ts's worker threads: one render per task, answered as the route's
 * 200 body in UTF-8. A large document's HTML runs to megabytes: encoded here and moved (not copied)
 * to the event loop, it costs that loop no serialization, no byte count and no encoding, only the
 * socket write. TextEncoder's array owns its memory (a small Buffer shares Node's pool, which
 * moving would take away from this thread). Piscina hands the caller the array itself.
 */
export default function renderTask ({ source, features }: RenderTask): ReturnType<typeof move> {
  const body: MarkdownHtml = { data: renderSafeMarkdown(source, features) }
  return move(new TextEncoder().encode(JSON.stringify(body)))
}
