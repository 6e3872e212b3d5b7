/**
 * What the renderer renders, in one place: the Markdown route's OpenAPI description is built from
 * it, and the README and docs/answers.md point to that description.
 */
export const WHAT_IS_RENDERED = [
  'GitHub Flavored Markdown (GFM 0.29), rendered with markdown-it: CommonMark (headings, paragraphs, emphasis, links, ' +
    'images, code, lists, block quotes, rules), GFM tables, strikethrough (`~~`), task list items (`- [ ]`, `- [x]`, as ' +
    'disabled checkboxes) and extended autolinks (`www.`, `http://`, `https://`, `ftp://` and e-mail addresses in text).',
  'Also as GitHub renders beyond that spec: footnotes (`[^label]`, numbered by first use, with a closing ' +
    '`<section data-footnotes class="footnotes">` and back-references), alerts (`> [!NOTE]`, `[!TIP]`, `[!IMPORTANT]`, ' +
    '`[!WARNING]`, `[!CAUTION]` as `<div class="markdown-alert markdown-alert-note">`), heading ids from GitHub\'s slugs ' +
    '(`<h2 id="user-content-install">`; every id starts with `user-content-`, and a link to `#install` points at it) and ' +
    'emoji shortcodes (`:tada:`).',
  'Raw HTML as github.com shows it: GFM\'s tagfilter (`script style iframe textarea title xmp noembed noframes plaintext` ' +
    'show as text), then GitHub\'s allowlist over the whole output. Kept: `a b blockquote br code dd del details div dl dt ' +
    'em h1-h6 hr i img ins kbd li ol p picture pre q rp rt ruby s samp section source span strike strong sub summary sup ' +
    'table tbody td tfoot th thead tr tt ul var` with GitHub\'s attributes (`align alt width height title open colspan ' +
    'rowspan`..., `a href`, `img src`, `source srcset`, `cite`); other elements removed, their text kept; `style`, `class`, ' +
    '`on...`, `data-*`, `target`, `rel` dropped; `id` and `name` prefixed `user-content-`. Where the operator set ' +
    'MARKDOWN_RAW_HTML=escape, all raw HTML is text.',
  'Fenced code with a language highlight.js knows is highlighted (spans with highlight.js\'s `hljs-` classes; the text ' +
    'exactly the source; no language, an unknown one or `text` plain). Math in GitHub\'s syntax (`$…$`, `` $`…`$ ``, ' +
    '`$$…$$`, ```` ```math ````) is MathML, shown by browsers without a script; prose dollars stay text; a formula that ' +
    'does not parse stays its source; TeX adds no link, class, style, id or image. Operators may turn either off ' +
    '(MARKDOWN_HIGHLIGHT, MARKDOWN_MATH).',
  'Never emitted: links, images and HTML URL attributes whose scheme is `javascript:`, `vbscript:`, `file:` or `data:` ' +
    '(other than `data:image/gif|png|jpeg|webp`), however they are written. Nothing of the input is lost, however deep ' +
    'it nests. Rendering time grows linearly with the input.'
].join(' ')
