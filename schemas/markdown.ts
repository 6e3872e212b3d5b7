import { Type, type Static } from '@sinclair/typebox'
import { MAX_MARKDOWN_LENGTH } from '../lib/markdown/render.js'

export const MarkdownRequest = Type.Object({
  markdown: Type.String({
    maxLength: MAX_MARKDOWN_LENGTH,
    description: 'The Markdown source, rendered as the operation\'s description says; ' +
      `at most ${MAX_MARKDOWN_LENGTH} characters (and the body at most BODY_LIMIT bytes).`,
    examples: ['# Title\n\nSome *emphasis*, a [link](https://example.com) and `code`.']
  })
}, {
  $id: 'MarkdownRequest',
  description: 'JSON only (`Content-Type: application/json`)',
  examples: [{ markdown: '# Hello\n\nSome *emphasis* and a [link](https://example.com).' }]
})
export type MarkdownRequest = Static<typeof MarkdownRequest>

export const MarkdownHtml = Type.Object({
  data: Type.String({
    description: 'The rendered HTML, safe to insert into a page; empty for an empty source.'
  })
}, {
  $id: 'MarkdownHtml',
  additionalProperties: false,
  examples: [{ data: '<h1>Hello</h1>\n<p>Some <em>emphasis</em> and a <a href="https://example.com">link</a>.</p>\n' }]
})
export type MarkdownHtml = Static<typeof MarkdownHtml>
