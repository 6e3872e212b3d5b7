import hljs from 'highlight.js/lib/common'
const sh = "curl -s -X POST localhost:3000/api/auth/login -d username=demo -d password=demo\ncurl -s 'localhost:3000/api/user/list?access_token=…&page=2'\n"
const ts = "import { renderSafeMarkdown } from './lib/markdown.js'\n\nconst html = renderSafeMarkdown('# Hello')\nconsole.log(html) // <h1>Hello</h1>\n"
const per = (f: () => unknown) => { for (let i = 0; i < 500; i++) f(); const s = performance.now(); for (let i = 0; i < 5000; i++) f(); return ((performance.now() - s) / 5000 * 1000).toFixed(1) + ' µs' }
console.log('sh', per(() => hljs.highlight(sh, { language: 'sh', ignoreIllegals: true })))
console.log('ts', per(() => hljs.highlight(ts, { language: 'ts', ignoreIllegals: true })))
console.log('js', per(() => hljs.highlight(ts, { language: 'js', ignoreIllegals: true })))
console.log('empty ts', per(() => hljs.highlight('x', { language: 'ts', ignoreIllegals: true })))
