import { availableParallelism } from 'node:os'
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import { HttpError } from '../../lib/http/errors.js'
import { DEFAULT_MARKDOWN_FEATURES, renderSafeMarkdown, type MarkdownFeatures } from '../../lib/markdown/render.js'
import type { RenderedMarkdown, RenderTask } from '../../lib/markdown/render-task.js'
import { rendersQuickly } from '../../lib/markdown/event-loop-bounds.js'

declare module 'fastify' {
  interface FastifyInstance {
    markdown: MarkdownRenderer
  }
}

export interface MarkdownRenderer {
  /** render.ts's HTML as the route answers it: small documents at once, others in a thread; 503 while too full. */
  render: (source: string) => Promise<RenderedMarkdown>
  load: () => { pendingCharacters: number, queuedRenders: number }
}

/** Markdown characters waiting or rendering at once, across requests: bounds the memory they hold and the wait. */
const MAX_PENDING_MARKDOWN_LENGTH = 8 * 1_048_576

/** Old-generation heap of each render thread: past it the thread dies (a 500), not the process. */
const RENDER_THREAD_HEAP_MB = 1024

/** Above V8's default: long paragraphs keep tokens (docs/performance.md, "The figures behind the code's constants"). */
const RENDER_THREAD_YOUNG_GENERATION_MB = 128

/** One thread fewer than the cores, so that a long render never takes the event loop's core. */
const RENDER_THREADS = Math.max(1, availableParallelism() - 1)

/** How long a render thread stays after its last render: an idle replica holds none. */
const RENDER_THREAD_IDLE_MS = 10_000

export interface MarkdownRendererOptions {
  features?: MarkdownFeatures
  threads?: number
  maxPendingLength?: number
  threadHeapMb?: number
}

// The worker module, in lib/markdown/: .ts when run through tsx, .js once compiled.
const workerFile = new URL(`../../lib/markdown/render-task${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/** Large Markdown renders in threads, so no input stalls other routes; small documents on the event loop. */
export default fp(async function markdownRenderer (fastify: FastifyInstance, options: MarkdownRendererOptions) {
  const {
    features = DEFAULT_MARKDOWN_FEATURES,
    threads = RENDER_THREADS,
    maxPendingLength = MAX_PENDING_MARKDOWN_LENGTH,
    threadHeapMb = RENDER_THREAD_HEAP_MB
  } = options
  const pool = new Piscina<RenderTask, Uint8Array>({
    filename: workerFile.href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: RENDER_THREAD_IDLE_MS,
    resourceLimits: {
      maxOldGenerationSizeMb: threadHeapMb,
      maxYoungGenerationSizeMb: RENDER_THREAD_YOUNG_GENERATION_MB
    }
  })
  let pendingLength = 0
  const inFlight = new Set<Promise<Uint8Array>>()
  // Piscina replaces a dead thread only up to minThreads (0): a render queued behind it would wait for the next large
  // document. An empty render starts a thread, which takes the queue in order.
  pool.on('workerDestroy', () => {
    // Once the dead thread is out of piscina's count, which happens after this event.
    setImmediate(() => { if (pool.queueSize > 0) pool.run({ source: '', features }).catch(() => {}) })
  })
  // A thread that fails outside any render (it cannot start) is reported here, not thrown.
  pool.on('error', (error: unknown) => { fastify.log.error({ err: error }, 'render thread failed') })

  fastify.decorate('markdown', {
    async render (source: string): Promise<RenderedMarkdown> {
      if (rendersQuickly(source)) return { data: renderSafeMarkdown(source, features) }
      if (pendingLength + source.length > maxPendingLength) {
        throw new HttpError(503, 'Service unavailable', { 'retry-after': '1' })
      }
      pendingLength += source.length
      const rendered = pool.run({ source, features })
      inFlight.add(rendered)
      try {
        return await rendered
      } finally {
        pendingLength -= source.length
        inFlight.delete(rendered)
      }
    },
    load: () => ({ pendingCharacters: pendingLength, queuedRenders: pool.queueSize })
  } satisfies MarkdownRenderer)

  // A worker module missing from the install fails the start, not the first large document (threads start lazily).
  fastify.addHook('onReady', async () => { await import(workerFile.href) })
  fastify.addHook('onClose', async () => {
    // Piscina's close waits for the renders running, and fails those still queued.
    await Promise.allSettled(inFlight)
    await pool.close()
  })
}, { name: 'markdown-renderer' })
