import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { commonErrors, errorResponses, ref } from '../../../schemas/common.js'
import { MarkdownHtml, MarkdownRequest } from '../../../schemas/markdown.js'

const parse: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/api/markdown/parse', {
    schema: {
      tags: ['markdown'],
      operationId: 'renderMarkdown',
      security: [],
      summary: 'Render Markdown to HTML that is safe to embed',
      description: 'CommonMark plus GitHub tables and strikethrough, rendered with markdown-it. Raw ' +
        'HTML in the input is escaped, never passed through; links and images whose scheme is ' +
        '`javascript:`, `vbscript:`, `file:` or `data:` (other than `data:image/gif|png|jpeg|webp`) ' +
        'stay text. Rendering time grows linearly with the input. JSON body only (415 otherwise), ' +
        'at most BODY_LIMIT bytes (413). 503 with Retry-After while too much Markdown is already ' +
        'being rendered. No token needed.',
      body: ref(MarkdownRequest),
      response: { 200: ref(MarkdownHtml), ...errorResponses([...commonErrors, 413, 415], { 400: 'markdown is required' }) }
    }
  }, async (request) => ({ data: await fastify.markdown.render(request.body.markdown) }))
}

export default parse
