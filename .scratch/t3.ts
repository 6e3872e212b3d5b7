import { renderSafeMarkdown } from '../lib/markdown/render.js'
console.log(renderSafeMarkdown('```ts\nexport function add (a: number, b: number): number { return a + b }\n```'))
console.log(renderSafeMarkdown('```js\nconst greet = (name) => `hi ${name}` // <b> & \'q\'\n```'))
