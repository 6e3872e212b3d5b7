import { renderSafeMarkdown } from '../lib/markdown/render.js'
const a = renderSafeMarkdown('```js\n' + 'a'.repeat(50) + '\n```')
console.log(a)
const b = renderSafeMarkdown('$$ a\n$$ a\n$$ a\n')
console.log(b)
