import { RAW_HTML_ELEMENTS } from './github-html.js'

/** What the renderer renders, in one place: the Markdown route's OpenAPI description, which the docs point to. */
export const WHAT_IS_RENDERED = [
  'GitHub Flavored Markdown (GFM 0.29), rendered with markdown-it: CommonMark (headings, paragraphs, emphasis, ' +
    'links, images, code, lists, block quotes, rules), GFM tables, strikethrough (`~~`), task list items (`- [ ]`, ' +
    '`- [x]`, as disabled checkboxes) and extended autolinks (`www.`, `http://`, `https://`, `ftp://` and e-mail ' +
    'addresses in text).',
  'Also as GitHub renders beyond that spec: footnotes (`[^label]`, numbered by first use, with a closing ' +
    '`<section data-footnotes class="footnotes">` and back-references), alerts (`> [!NOTE]`, `[!TIP]`, ' +
    '`[!IMPORTANT]`, `[!WARNING]`, `[!CAUTION]` as `<div class="markdown-alert markdown-alert-note">`), heading ids ' +
    'from GitHub\'s slugs (`<h2 id="user-content-install">`; every id starts with `user-content-`, and a link to ' +
    '`#install` points at it) and emoji shortcodes (`:tada:`).',
  'Raw HTML as github.com shows it: GFM\'s tagfilter (`script style iframe textarea title xmp noembed noframes ' +
    'plaintext` show as text), then GitHub\'s allowlist over the whole output. ' +
    `Kept: \`${RAW_HTML_ELEMENTS.join(' ')}\` with GitHub's attributes for each ` +
    '(`align alt width height title open colspan rowspan`..., `a href`, `img src`, `source srcset`, `cite`); other ' +
    'elements removed, their text kept; `style`, `class`, `on...`, `data-*`, `target`, `rel` dropped; `id` and ' +
    '`name` prefixed `user-content-`. A URL in raw HTML keeps only the schemes `http`, `https` and `mailto` ' +
    '(`data:image/gif|png|jpeg|webp` on images), by GitHub\'s rule: anything before a `:` that comes before any ' +
    '`/`, `?` or `#` is the scheme. Where the operator set MARKDOWN_RAW_HTML=escape, all raw HTML is text.',
  'Fenced code with a language highlight.js knows is highlighted (spans with highlight.js\'s `hljs-` classes; the ' +
    'text exactly the source; no language, an unknown one or `text` plain). Math in GitHub\'s syntax (`$…$`, ' +
    '`` $`…`$ ``, `$$…$$`, ```` ```math ````) is MathML, shown by browsers without a script; prose dollars stay ' +
    'text; a formula that does not parse stays its source; TeX adds no link, class, style, id or image. Operators ' +
    'may turn either off (MARKDOWN_HIGHLIGHT, MARKDOWN_MATH).',
  'Never emitted: Markdown links and images whose scheme is `javascript:`, `vbscript:`, `file:` or `data:` ' +
    '(other than `data:image/gif|png|jpeg|webp`), however they are written. Raw HTML, highlighted code and MathML ' +
    'pass one sanitizer, with one schema. Nothing of the input is lost, however deep ' +
    'it nests. Rendering time grows linearly with the input.'
].join(' ')
