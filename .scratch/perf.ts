import { renderSafeMarkdown } from '../lib/markdown/render.js'
const MiB = 1 << 20
const time = (name: string, src: string) => { const s = performance.now(); const out = renderSafeMarkdown(src.slice(0, MiB)); console.log(name.padEnd(40), (performance.now() - s).toFixed(0).padStart(6), 'ms', out.length) }
const js = '```js\n' + 'function add (a, b) { return a + b } // sum\nconst x = [1, 2, 3].map((n) => n * 2)\n'.repeat(15000) + '```\n'
time('1 MiB one js block', js)
time('1 MiB many js blocks', ('```js\nconst a = 1\nlet b = "x" + a\n```\n\n').repeat(40000))
time('1 MiB word run 128 blocks', ('```js\n' + 'a'.repeat(128) + '\n```\n\n').repeat(8000))
time('1 MiB $ run java', ('```java\n' + '$'.repeat(128) + ' ').repeat(8000) + '\n```')
time('1 MiB $x$ formulas', '$x^2$ '.repeat(200000))
time('20,000 formulas', '$\\frac{a}{b}$ '.repeat(20000))
time('1 MiB one formula', '$$' + 'x+'.repeat(4000) + 'x$$\n\n'.repeat(1))
time('1000-deep frac', '$' + '\\frac{'.repeat(1000) + 'x' + '}{y}'.repeat(1000) + '$')
time('1 MiB of 60-deep fracs', ('$' + '\\frac{'.repeat(60) + 'x' + '}{y}'.repeat(60) + '$\n\n').repeat(1200))
time('def loop', '$\\def\\a{\\a\\a}\\a$ '.repeat(2000))
time('1 MiB sqrt chain', ('$' + '\\sqrt'.repeat(1500) + ' x$\n\n').repeat(130))
time('unclosed $ openers', '$a '.repeat(300000))
time('unclosed $$ blocks', '$$\na\n\n'.repeat(150000))
time('backticks and dollars', '$a `b '.repeat(150000))
