import { renderSafeMarkdown } from '../lib/markdown/render.js'
const MiB = 1 << 20
const time = (name: string, src: string) => { const s = performance.now(); const out = renderSafeMarkdown(src.slice(0, MiB)); console.log(name.padEnd(40), (performance.now() - s).toFixed(0).padStart(6), 'ms', out.length) }
time('code spans then dollars', '`a` '.repeat(100000) + '$b '.repeat(100000))
time('spans and openers mixed', '`a` $b '.repeat(150000))
time('backticks and dollars', '$a `b '.repeat(150000))
time('$x$ pairs failing', '$}$'.repeat(300000))
