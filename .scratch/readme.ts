import { renderSafeMarkdown, DEFAULT_MARKDOWN_FEATURES } from '../lib/markdown/render.js'
import { README, README_WITH_HTML } from '../test/support/markdown-corpus.js'
const per = (src: string, f = DEFAULT_MARKDOWN_FEATURES) => { for (let i = 0; i < 300; i++) renderSafeMarkdown(src, f); const s = performance.now(); for (let i = 0; i < 2000; i++) renderSafeMarkdown(src, f); return ((performance.now() - s) / 2000 * 1000).toFixed(0) + ' µs' }
console.log('README default', per(README), 'no highlight', per(README, { ...DEFAULT_MARKDOWN_FEATURES, highlight: false }), 'neither', per(README, { rawHtml: 'github', highlight: false, math: false }))
console.log('README_WITH_HTML default', per(README_WITH_HTML), 'neither', per(README_WITH_HTML, { rawHtml: 'github', highlight: false, math: false }))
