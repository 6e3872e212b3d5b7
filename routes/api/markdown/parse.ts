import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { COMPRESSED } from '../../../lib/http/compressed.js'
import { apiErrors, bodyErrors, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { WHAT_IS_RENDERED } from '../../../lib/markdown/features.js'
import { MarkdownHtml, MarkdownRequest } from '../../../schemas/markdown.js'
import type { RenderedMarkdown } from '../../../lib/markdown/render-task.js'

const parse: FastifyPluginAsyncTypebox = async (fastify) => {
  // The schema's object, or (from a render thread) its JSON already encoded, which Fastify sends as it is.
  fastify.post<{ Body: MarkdownRequest, Reply: RenderedMarkdown }>('/api/markdown/parse', {
    config: { fairShare: 'document' },
    compress: COMPRESSED,
    schema: {
      tags: ['markdown'],
      operationId: 'renderMarkdown',
      security: [],
      summary: 'Render Markdown to HTML that is safe to embed',
      description: WHAT_IS_RENDERED + ' JSON body only (415 otherwise), at most BODY_LIMIT bytes (413). ' +
        '503 with Retry-After while too much Markdown is already being rendered. No token needed; each client ' +
        'address is charged the document\'s Content-Length against its fair share (429 with Retry-After past it; ' +
        'see RateLimit-Policy).',
      body: ref(MarkdownRequest),
      response: {
        200: ref(MarkdownHtml, withRateLimitHeaders),
        ...errorResponses([...apiErrors, ...bodyErrors], { 400: 'markdown is required' })
      }
    }
  }, async (request, reply) => {
    const answer = await fastify.markdown.render(request.body.markdown)
    if (!(answer instanceof Uint8Array)) return answer
    return reply.type('application/json; charset=utf-8').send(answer)
  })
}

export default parse
