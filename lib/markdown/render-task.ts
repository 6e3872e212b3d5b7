import { move } from 'piscina'
import { renderSafeMarkdown, type MarkdownFeatures } from './render.js'
import type { MarkdownHtml } from '../../schemas/markdown.js'

/** The route's 200 answer: `{ data }` for Fastify to serialize, or from a thread the same JSON already encoded. */
export type RenderedMarkdown = MarkdownHtml | Uint8Array

export interface RenderTask { source: string, features: MarkdownFeatures }

/** The 200 body in UTF-8, moved not copied: TextEncoder's array owns its memory (a small Buffer shares a pool). */
export default function renderTask ({ source, features }: RenderTask): ReturnType<typeof move> {
  const body: MarkdownHtml = { data: renderSafeMarkdown(source, features) }
  return move(new TextEncoder().encode(JSON.stringify(body)))
}
