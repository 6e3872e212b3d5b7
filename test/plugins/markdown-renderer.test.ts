import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helper.js'
import { pathologicalCases } from '../../bench/markdown.js'
import type { MarkdownRendererOptions } from '../../plugins/markdown-renderer.js'

const MiB = 1_048_576

/** Half a MiB of lazy lines in a deep block quote: the slowest category, most of a second here. */
function slowMarkdown (): string {
  const category = pathologicalCases.find(({ name }) => name.startsWith('lazy lines'))
  if (category === undefined) throw new Error('no lazy-lines category in bench/markdown.ts')
  return category.generate(MiB / 2)
}

async function buildRenderer (t: Test, options: MarkdownRendererOptions = {}): Promise<FastifyInstance> {
  return await build(t, { BODY_LIMIT: String(4 * MiB) }, { markdownRenderer: options })
}

/** Posts Markdown; the reply resolves when it is complete. */
async function post (app: FastifyInstance, markdown: string) {
  return await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown } })
}

interface RenderWatch {
  /** Resolves when the route hands the source to the renderer. */
  started: Promise<void>
  /** Whether that render has finished (resolved or failed). */
  settled: () => boolean
}

/** Watches the next render the route asks for. */
function watchNextRender (app: FastifyInstance): RenderWatch {
  const original = app.markdown.render
  let settled = false
  let markStarted = (): void => {}
  const started = new Promise<void>((resolve) => { markStarted = resolve })
  app.markdown.render = async (source) => {
    app.markdown.render = original
    markStarted()
    try {
      return await original(source)
    } finally {
      settled = true
    }
  }
  return { started, settled: () => settled }
}

t.test('a long render leaves the event loop free for the other routes', async (t) => {
  const app = await buildRenderer(t)
  const render = watchNextRender(app)
  const markdownReply = post(app, slowMarkdown())
  await render.started
  const live = await app.inject({ method: 'GET', url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.notOk(render.settled(), 'the health check answered while the render was still running')
  const reply = await markdownReply
  t.equal(reply.statusCode, 200)
  t.match(JSON.parse(reply.body).data, /^<blockquote>/)
})

t.test('past the pending length, 503 with Retry-After until the renders catch up', async (t) => {
  const slow = slowMarkdown()
  const app = await buildRenderer(t, { maxPendingLength: slow.length + 10 })
  const render = watchNextRender(app)
  const slowReply = post(app, slow)
  await render.started
  const refused = await post(app, 'one more *paragraph*')
  t.equal(refused.statusCode, 503)
  t.equal(refused.headers['retry-after'], '1')
  t.same(JSON.parse(refused.body), { error: { code: 503, message: 'Service unavailable' } })
  t.notOk(render.settled(), 'refused while the first render was running')
  t.equal((await slowReply).statusCode, 200)
  const accepted = await post(app, 'one more *paragraph*')
  t.equal(accepted.statusCode, 200)
  t.equal(JSON.parse(accepted.body).data, '<p>one more <em>paragraph</em></p>\n')
})

t.test('a render that exhausts its thread heap answers 500; the process and the pool go on', async (t) => {
  const app = await buildRenderer(t, { threadHeapMb: 64 })
  const huge = await post(app, slowMarkdown())
  t.equal(huge.statusCode, 500)
  t.same(JSON.parse(huge.body), { error: { code: 500, message: 'Internal server error' } })
  const next = await post(app, '# still here')
  t.equal(next.statusCode, 200)
  t.equal(JSON.parse(next.body).data, '<h1>still here</h1>\n')
})

t.test('closing the app waits for a render in progress', async (t) => {
  const app = await buildRenderer(t)
  const render = watchNextRender(app)
  const reply = post(app, slowMarkdown())
  await render.started
  await app.close()
  t.equal((await reply).statusCode, 200)
})
