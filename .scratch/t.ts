import { renderSafeMarkdown } from '../lib/markdown/render.js'
console.log(JSON.stringify(renderSafeMarkdown('```js\ncode()\n```')))
