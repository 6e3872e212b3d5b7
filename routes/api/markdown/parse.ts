import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { apiErrors, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { MarkdownHtml, MarkdownRequest } from '../../../schemas/markdown.js'

const parse: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/api/markdown/parse', {
    config: { fairShare: 'document' },
    schema: {
      tags: ['markdown'],
      operationId: 'renderMarkdown',
      security: [],
      summary: 'Render Markdown to HTML that is safe to embed',
      description: 'GitHub Flavored Markdown (GFM 0.29), rendered with markdown-it. Rendered: CommonMark ' +
        '(headings, paragraphs, emphasis, links, images, code, lists, block quotes, rules), GFM tables, ' +
        'strikethrough (`~~`), task list items (`- [ ]`, `- [x]`, as disabled checkboxes) and extended ' +
        'autolinks (`www.`, `http://`, `https://`, `ftp://` and e-mail addresses in text). Also as GitHub ' +
        'renders beyond that spec: footnotes (`[^label]`, numbered by first use, with a closing ' +
        '`<section data-footnotes class="footnotes">` and back-references), alerts (`> [!NOTE]`, `[!TIP]`, ' +
        '`[!IMPORTANT]`, `[!WARNING]`, `[!CAUTION]` as `<div class="markdown-alert markdown-alert-note">`), ' +
        'heading ids from GitHub\'s slugs (`<h2 id="user-content-install">`; every id starts with ' +
        '`user-content-`, and a link to `#install` points at it) and emoji shortcodes (`:tada:`). Escaped, shown ' +
        'as text: all raw HTML in the input (so GFM\'s disallowed raw HTML is moot), and links and images ' +
        'whose scheme is `javascript:`, `vbscript:`, `file:` or `data:` (other than ' +
        '`data:image/gif|png|jpeg|webp`), however they are written. Nothing of the input is lost, however ' +
        'deep it nests. Rendering time grows linearly with the input. JSON body only (415 otherwise), at most BODY_LIMIT bytes (413). 503 with Retry-After ' +
        'while too much Markdown is already being rendered. No token needed; each client address is charged the document\'s ' +
        'Content-Length against its fair share (429 with Retry-After past it; see RateLimit-Policy).',
      body: ref(MarkdownRequest),
      response: { 200: ref(MarkdownHtml, withRateLimitHeaders), ...errorResponses([...apiErrors, 413, 415], { 400: 'markdown is required' }) }
    }
  }, async (request, reply) => {
    const answer = await fastify.markdown.render(request.body.markdown)
    if (!(answer instanceof Uint8Array)) return answer
    // A thread's answer is this schema's JSON already encoded, which Fastify sends as it is. The
    // type provider types send() as the object only, hence the cast.
    return reply.type('application/json; charset=utf-8').send(answer as unknown as MarkdownHtml)
  })
}

export default parse
