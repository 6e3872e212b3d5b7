import { renderSafeMarkdown } from '../lib/markdown/render.js'
import { README } from '../test/support/markdown-corpus.js'
const per = (f: any) => { for (let i = 0; i < 1000; i++) renderSafeMarkdown(README, f); const s = performance.now(); for (let i = 0; i < 4000; i++) renderSafeMarkdown(README, f); return ((performance.now() - s) / 4000 * 1000).toFixed(1) }
for (let r = 0; r < 3; r++) console.log('none', per({ rawHtml: 'github', highlight: false, math: false }), 'math', per({ rawHtml: 'github', highlight: false, math: true }), 'hl', per({ rawHtml: 'github', highlight: true, math: false }), 'both', per({ rawHtml: 'github', highlight: true, math: true }))
