import { renderSafeMarkdown } from '../lib/markdown/render.js'
import { README_WITH_MATH } from '../test/support/markdown-corpus.js'
const h = renderSafeMarkdown(README_WITH_MATH)
console.log((h.match(/<math/g) ?? []).length, h.includes('costs $0 to run and $5'), h.slice(-600))
