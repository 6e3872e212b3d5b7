import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'
import { full as emojiPlugin } from 'markdown-it-emoji'

/** Every shortcode of the list looks so; most text has none, and this test is far cheaper than the plugin's search. */
const LOOKS_LIKE_SHORTCODE = /:[a-z0-9_+-]+:/

/** GitHub's shortcodes, in text only, no emoticons; per token, where the plugin's rule is quadratic in a paragraph. */
export function githubEmoji (md: MarkdownIt): void {
  md.use(emojiPlugin, { shortcuts: {} })
  const replace = md.core.ruler.getRules('').find((rule) => rule.name === 'emoji_replace')
  if (replace === undefined) throw new Error('markdown-it-emoji has no emoji_replace rule')
  md.core.ruler.at('emoji', (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || block.children === null || !LOOKS_LIKE_SHORTCODE.test(block.content)) continue
      const children: Token[] = []
      let autolinkDepth = 0
      for (const token of block.children) {
        if ((token.type === 'link_open' || token.type === 'link_close') && token.info === 'auto') {
          autolinkDepth += token.nesting
        }
        if (token.type !== 'text' || autolinkDepth > 0 || !LOOKS_LIKE_SHORTCODE.test(token.content)) {
          children.push(token)
          continue
        }
        const alone = new state.Token('inline', '', 0)
        alone.children = [token]
        // The rule reads only these two of the state.
        replace({ tokens: [alone], Token: state.Token } as unknown as StateCore)
        for (const piece of alone.children) children.push(piece)
      }
      block.children = children
    }
  })
}
