import t from 'tap'
import { build } from '../../../support/helper.js'
import { normalizeHtml, withoutServiceAdditions } from '../../../support/commonmark-normalize.js'
import { gfmExtensionExamples } from './gfm-spec-examples.js'

t.test('every GFM 0.29 example of extended autolinks and task list items through POST /api/markdown/parse', async (t) => {
  const app = await build(t)
  t.equal(gfmExtensionExamples.filter(({ section }) => section === 'autolink').length, 11, 'the 11 autolink examples')
  t.equal(gfmExtensionExamples.filter(({ section }) => section === 'tasklist').length, 2, 'the 2 task list examples')
  for (const example of gfmExtensionExamples) {
    const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: example.markdown } })
    t.equal(normalizeHtml(withoutServiceAdditions(response.json<{ data: string }>().data)), normalizeHtml(example.html), `GFM example ${example.number} (${example.section})`)
  }
})
