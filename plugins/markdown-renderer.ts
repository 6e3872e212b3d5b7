import { availableParallelism } from 'node:os'
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import { HttpError } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    markdown: MarkdownRenderer
  }
}

export interface MarkdownRenderer {
  /** The HTML of lib/markdown.ts, rendered off the event loop; 503 while too much is waiting. */
  render: (source: string) => Promise<string>
  /** What is waiting or rendering now, for the metrics. */
  load: () => { pendingCharacters: number, queuedRenders: number }
}

/**
 * Markdown characters waiting or rendering at once, across requests. The slowest input takes
 * up to about 2 s per MiB here, so this bounds both the memory held by waiting sources and the wait.
 */
export const MAX_PENDING_MARKDOWN_LENGTH = 8 * 1_048_576

/**
 * Old-generation heap of each render thread; every 1 MiB input of bench/markdown.ts renders
 * within it. Past it the thread dies (the request answers 500 and the pool replaces it), not
 * the process.
 */
export const RENDER_THREAD_HEAP_MB = 1024

/**
 * Young generation of each render thread, against V8's 48 MB default here. A 1 MiB paragraph of
 * emphasis delimiters keeps its inline tokens alive until the paragraph is rendered, and a larger
 * young generation collects them less often on the way: measured through the route (median of
 * three 1 MiB requests, two runs each), `**_*` took 1.1–1.5 s against 1.7 s with the default, and
 * `*…*a*…*` 1.0 s against 1.4 s. Many list items (rendered as they end) and a very wide table
 * took 1.2–1.4 s either way.
 */
export const RENDER_THREAD_YOUNG_GENERATION_MB = 128

/** One thread fewer than the cores, so that a long render never takes the event loop's core. */
export const RENDER_THREADS = Math.max(1, availableParallelism() - 1)

export interface MarkdownRendererOptions {
  /** Render threads; by default RENDER_THREADS. */
  threads?: number
  /** By default MAX_PENDING_MARKDOWN_LENGTH. */
  maxPendingLength?: number
  /** By default RENDER_THREAD_HEAP_MB. */
  threadHeapMb?: number
}

// The worker is a sibling of lib/markdown.ts: .ts under the test runner, .js once built.
const workerFile = new URL(`../lib/markdown-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Renders Markdown in worker threads, so that a 1 MiB input (up to about 2 s and a few
 * hundred MB of tokens) never stalls the other routes or trips the event-loop check.
 */
export default fp(async function markdownRenderer (fastify: FastifyInstance, options: MarkdownRendererOptions) {
  const {
    threads = RENDER_THREADS,
    maxPendingLength = MAX_PENDING_MARKDOWN_LENGTH,
    threadHeapMb = RENDER_THREAD_HEAP_MB
  } = options
  const pool = new Piscina<string, string>({
    filename: workerFile.href,
    minThreads: threads,
    maxThreads: threads,
    resourceLimits: { maxOldGenerationSizeMb: threadHeapMb, maxYoungGenerationSizeMb: RENDER_THREAD_YOUNG_GENERATION_MB }
  })
  let pendingLength = 0

  fastify.decorate('markdown', {
    async render (source: string): Promise<string> {
      if (pendingLength + source.length > maxPendingLength) {
        throw new HttpError(503, 'Service unavailable', { 'retry-after': '1' })
      }
      pendingLength += source.length
      try {
        return await pool.run(source)
      } finally {
        pendingLength -= source.length
      }
    },
    load: () => ({ pendingCharacters: pendingLength, queuedRenders: pool.queueSize })
  } satisfies MarkdownRenderer)

  // A worker that cannot load fails the start, not the first request.
  fastify.addHook('onReady', async () => { await pool.run('') })
  fastify.addHook('onClose', async () => { await pool.close() })
}, { name: 'markdown-renderer' })
