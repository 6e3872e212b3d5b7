import { renderSafeMarkdown } from '../lib/markdown.js'
console.log(JSON.stringify(renderSafeMarkdown('```js\ncode()\n```')))
