import t from 'tap'
import { DEFAULT_MARKDOWN_FEATURES, renderSafeMarkdown as render } from '../../../lib/markdown/render.js'
import { BLOCK_FLOOR_CHARACTERS, HIGHLIGHTED_PER_DOCUMENT, highlightCode, MAX_HIGHLIGHTED_BLOCK, MAX_WORD_RUN } from '../../../lib/markdown/code-highlight.js'

const PLAIN = { ...DEFAULT_MARKDOWN_FEATURES, highlight: false }

/** The text a browser shows of a code block the renderer wrote: its tags left out, its character references read. */
const textOf = (html: string): string => (/<code[^>]*>([\s\S]*)<\/code>/.exec(html)?.[1] ?? '').replace(/<[^>]*>/g, '')
  .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&amp;/g, '&')

const fence = (language: string, code: string): string => `\`\`\`${language}\n${code}\n\`\`\``

/** Per language READMEs use, its usual names, and a line with a keyword, a string and a comment or the like. */
const SAMPLES: Array<[string[], string]> = [
  [['js', 'javascript', 'jsx', 'mjs'], 'const greet = (name) => `hi ${name}` // <b> & \'q\''],
  [['ts', 'typescript', 'tsx'], 'export function add (a: number, b: number): number { return a + b }'],
  [['python', 'py'], 'def area(r):\n    return 3.14 * r ** 2  # "circle"'],
  [['bash', 'sh', 'shell', 'zsh'], 'if [ -f "$HOME/.rc" ]; then echo "<ok>"; fi # done'],
  [['json'], '{"name": "meridian", "ok": true, "n": 1}'],
  [['diff', 'patch'], '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new'],
  [['go', 'golang'], 'func main() { fmt.Println("<hi>") } // go'],
  [['rust', 'rs'], 'fn main() { let x: u32 = 1; println!("{}", x); }'],
  [['html', 'xml'], '<p class="x">a &amp; b</p><!-- c -->'],
  [['css'], '.a > b { color: #fff; margin: 0 auto; }'],
  [['yaml', 'yml'], 'name: meridian\nports:\n  - "8080:80" # web'],
  [['sql'], "SELECT name FROM users WHERE id = 1 AND note <> 'x';"],
  [['java'], 'public class A { static int n = 1; String s = "<s>"; }'],
  [['c', 'h'], '#include <stdio.h>\nint main(void) { return 0; /* ok */ }']
]

t.test('the languages READMEs use are highlighted by their usual names; the text is the source exactly', async (t) => {
  for (const [names, code] of SAMPLES) {
    for (const name of names) {
      const html = render(fence(name, code))
      t.ok(html.startsWith(`<pre><code class="language-${name}">`), `${name}: language-${name} stays on <code>`)
      const tokens = [...html.matchAll(/<span class="(hljs-[^"]+)">/g)].map((match) => match[1])
      t.ok(tokens.length >= 2, `${name}: token spans (${tokens.join(', ')})`)
      t.equal(textOf(html), code + '\n', `${name}: the block's text is its source`)
    }
  }
})

t.test('token spans nest and name what they hold', async (t) => {
  const html = render(fence('js', 'const s = `a${b}` // c'))
  t.match(html, '<span class="hljs-keyword">const</span>')
  t.match(html, '<span class="hljs-string">`a<span class="hljs-subst">${b}</span>`</span>', 'a substitution inside its string')
  t.match(html, '<span class="hljs-comment">// c</span>')
})

t.test('no language, an unknown one or text: plain, as before', async (t) => {
  for (const language of ['', 'nope', 'text', 'txt', 'plaintext']) {
    const source = fence(language, 'const a = "<b>"')
    t.equal(render(source), render(source, PLAIN), `\`${language}\``)
    t.notMatch(render(source), 'hljs-')
  }
})

t.test('a hostile info string never becomes markup', async (t) => {
  t.equal(render(fence('"><img src=x onerror=alert(1)>', 'x')), '<pre><code class="language-&quot;&gt;&lt;img">x\n</code></pre>\n')
  const withAttributes = render(fence('js onclick=alert(1) class=x', 'let a'))
  t.ok(withAttributes.startsWith('<pre><code class="language-js"><span class="hljs-keyword">let</span> a'), 'only the first word names the language')
  t.notMatch(withAttributes, 'onclick')
  t.equal(render(fence('js"', 'let a')), render(fence('js"', 'let a'), PLAIN), 'an unknown name with a quote: plain, its quote escaped')
})

t.test('MARKDOWN_HIGHLIGHT=off: every block plain', async (t) => {
  t.equal(render(fence('js', 'let a = 1'), PLAIN), '<pre><code class="language-js">let a = 1\n</code></pre>\n')
})

t.test('bounded: long word runs, long blocks and blocks past the document\'s budget stay plain, nothing of the text lost', async (t) => {
  const word = 'a'.repeat(MAX_WORD_RUN)
  t.match(render(fence('js', `let ${word}`)), 'hljs-keyword', `a run of ${MAX_WORD_RUN} word characters is highlighted`)
  for (const [name, code] of [
    ['a run one longer', `let ${word}a`],
    ['a run of $ as Java', '$'.repeat(MAX_WORD_RUN + 1)],
    ['100,000 characters of one word', 'a'.repeat(100_000)],
    ['a block past MAX_HIGHLIGHTED_BLOCK', 'let a = 1\n'.repeat(MAX_HIGHLIGHTED_BLOCK / 10 + 1)]
  ] as const) {
    const html = render(fence(name.includes('Java') ? 'java' : 'js', code))
    t.notMatch(html, 'hljs-', name)
    t.equal(textOf(html), code + '\n', `${name}: its text kept`)
  }
  const full = HIGHLIGHTED_PER_DOCUMENT - BLOCK_FLOOR_CHARACTERS
  t.equal(highlightCode('let a', 'js', { highlightedCharacters: full + 1 }), undefined, 'a document past its budget highlights no more')
  const env = { highlightedCharacters: full }
  t.match(highlightCode('let a', 'js', env), 'hljs-keyword', 'one within it does')
  t.equal(env.highlightedCharacters, HIGHLIGHTED_PER_DOCUMENT, 'counted at its floor')
  const blocks = `${fence('js', 'let a')}\n\n`.repeat(HIGHLIGHTED_PER_DOCUMENT / BLOCK_FLOOR_CHARACTERS + 10)
  const html = render(blocks)
  t.equal(html.match(/<code class="language-js"><span/g)?.length, HIGHLIGHTED_PER_DOCUMENT / BLOCK_FLOOR_CHARACTERS,
    'of many small blocks, as many as the budget holds are highlighted, by their size and not the clock')
  t.equal(render(blocks), html, 'the same document renders the same')
})
