import type MarkdownIt from 'markdown-it'
import type { StateCore, Token } from 'markdown-it'
import { full as emojiPlugin } from 'markdown-it-emoji'

/**
 * What every shortcode of the list looks like (names of lower-case letters, digits, `_`, `+`, `-`).
 * Most text has none, and this test costs much less than the plugin's search through all names.
 */
const LOOKS_LIKE_SHORTCODE = /:[a-z0-9_+-]+:/

/**
 * Emoji shortcodes (`:tada:` → 🎉) by markdown-it-emoji's full list, GitHub's (gemoji's) names,
 * in text only: never in code spans, code blocks, URLs or autolinks. Without the plugin's
 * emoticons (`:)`, `<3`), which GitHub does not render.
 *
 * The plugin's core rule replaces each text token that holds a shortcode by splicing a copy of
 * its paragraph's whole token list, so a paragraph of many such tokens (`:tada:\:` repeated) was
 * quadratic: 200 KB took 18 s. Here the same rule is run on one text token at a time, and the
 * paragraph's list is rebuilt once.
 */
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
