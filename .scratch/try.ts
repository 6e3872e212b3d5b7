import { renderSafeMarkdown } from '../lib/markdown/render.js'
const cases = [
  '```js\nconst a = 1 // x\n```',
  '```text\nplain <b>\n```',
  '```nope\nx\n```',
  '```"><img src=x onerror=alert(1)>\nx\n```',
  '```js onclick=x\nlet a\n```',
  'Inline $x^2$ and $`\\frac{a}{b}`$ and costs $5 and $10, $HOME, \\$x\\$ and `$x$`.',
  '$$\\frac{a}{b}$$',
  '$$\n\\begin{matrix}a&b\\\\c&d\\end{matrix}\n$$',
  '```math\n\\sqrt{2}\n```',
  'bad $\\frac{a$ here',
  '$x$5 and $y$',
  '<b>raw</b> with $x^2$\n\n```js\nlet a = 1\n```',
  '$\\href{javascript:alert(1)}{x}$ $\\color{red}{x}$ $\\ref{a}$',
]
for (const c of cases) console.log(JSON.stringify(c), '\n  →', renderSafeMarkdown(c))
