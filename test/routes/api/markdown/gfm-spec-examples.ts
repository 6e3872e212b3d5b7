/**
 * The GFM spec's examples of the two extensions this service adds to CommonMark: version 0.29,
 * `test/spec.txt` of github/cmark-gfm, the 11 examples marked `autolink` (621–631, "Autolinks
 * (extension)") and the 2 marked `disabled` (279–280, "Task list items (extension)"), copied
 * as they are (tabs as tabs), numbered as that spec numbers them.
 */
export interface GfmExample { number: number, section: 'autolink' | 'tasklist', markdown: string, html: string }

export const gfmExtensionExamples: GfmExample[] = [
  { number: 279, section: 'tasklist', markdown: '- [ ] foo\n- [x] bar\n', html: '<ul>\n<li><input disabled="" type="checkbox"> foo</li>\n<li><input checked="" disabled="" type="checkbox"> bar</li>\n</ul>\n' },
  { number: 280, section: 'tasklist', markdown: '- [x] foo\n  - [ ] bar\n  - [x] baz\n- [ ] bim\n', html: '<ul>\n<li><input checked="" disabled="" type="checkbox"> foo\n<ul>\n<li><input disabled="" type="checkbox"> bar</li>\n<li><input checked="" disabled="" type="checkbox"> baz</li>\n</ul>\n</li>\n<li><input disabled="" type="checkbox"> bim</li>\n</ul>\n' },
  { number: 621, section: 'autolink', markdown: 'www.commonmark.org\n', html: '<p><a href="http://www.commonmark.org">www.commonmark.org</a></p>\n' },
  { number: 622, section: 'autolink', markdown: 'Visit www.commonmark.org/help for more information.\n', html: '<p>Visit <a href="http://www.commonmark.org/help">www.commonmark.org/help</a> for more information.</p>\n' },
  { number: 623, section: 'autolink', markdown: 'Visit www.commonmark.org.\n\nVisit www.commonmark.org/a.b.\n', html: '<p>Visit <a href="http://www.commonmark.org">www.commonmark.org</a>.</p>\n<p>Visit <a href="http://www.commonmark.org/a.b">www.commonmark.org/a.b</a>.</p>\n' },
  { number: 624, section: 'autolink', markdown: 'www.google.com/search?q=Markup+(business)\n\nwww.google.com/search?q=Markup+(business)))\n\n(www.google.com/search?q=Markup+(business))\n\n(www.google.com/search?q=Markup+(business)\n', html: '<p><a href="http://www.google.com/search?q=Markup+(business)">www.google.com/search?q=Markup+(business)</a></p>\n<p><a href="http://www.google.com/search?q=Markup+(business)">www.google.com/search?q=Markup+(business)</a>))</p>\n<p>(<a href="http://www.google.com/search?q=Markup+(business)">www.google.com/search?q=Markup+(business)</a>)</p>\n<p>(<a href="http://www.google.com/search?q=Markup+(business)">www.google.com/search?q=Markup+(business)</a></p>\n' },
  { number: 625, section: 'autolink', markdown: 'www.google.com/search?q=(business))+ok\n', html: '<p><a href="http://www.google.com/search?q=(business))+ok">www.google.com/search?q=(business))+ok</a></p>\n' },
  { number: 626, section: 'autolink', markdown: 'www.google.com/search?q=commonmark&hl=en\n\nwww.google.com/search?q=commonmark&hl;\n', html: '<p><a href="http://www.google.com/search?q=commonmark&amp;hl=en">www.google.com/search?q=commonmark&amp;hl=en</a></p>\n<p><a href="http://www.google.com/search?q=commonmark">www.google.com/search?q=commonmark</a>&amp;hl;</p>\n' },
  { number: 627, section: 'autolink', markdown: 'www.commonmark.org/he<lp\n', html: '<p><a href="http://www.commonmark.org/he">www.commonmark.org/he</a>&lt;lp</p>\n' },
  { number: 628, section: 'autolink', markdown: 'http://commonmark.org\n\n(Visit https://encrypted.google.com/search?q=Markup+(business))\n\nAnonymous FTP is available at ftp://foo.bar.baz.\n', html: '<p><a href="http://commonmark.org">http://commonmark.org</a></p>\n<p>(Visit <a href="https://encrypted.google.com/search?q=Markup+(business)">https://encrypted.google.com/search?q=Markup+(business)</a>)</p>\n<p>Anonymous FTP is available at <a href="ftp://foo.bar.baz">ftp://foo.bar.baz</a>.</p>\n' },
  { number: 629, section: 'autolink', markdown: 'foo@bar.baz\n', html: '<p><a href="mailto:foo@bar.baz">foo@bar.baz</a></p>\n' },
  { number: 630, section: 'autolink', markdown: "hello@mail+xyz.example isn't valid, but hello+xyz@mail.example is.\n", html: "<p>hello@mail+xyz.example isn't valid, but <a href=\"mailto:hello+xyz@mail.example\">hello+xyz@mail.example</a> is.</p>\n" },
  { number: 631, section: 'autolink', markdown: 'a.b-c_d@a.b\n\na.b-c_d@a.b.\n\na.b-c_d@a.b-\n\na.b-c_d@a.b_\n', html: '<p><a href="mailto:a.b-c_d@a.b">a.b-c_d@a.b</a></p>\n<p><a href="mailto:a.b-c_d@a.b">a.b-c_d@a.b</a>.</p>\n<p>a.b-c_d@a.b-</p>\n<p>a.b-c_d@a.b_</p>\n' }
]

/**
 * CommonMark 0.31.2 examples whose answer changes under GFM's extended autolinks: bare URLs and
 * addresses, and URLs inside `<…>` that are not autolinks, are linked, as GitHub links them
 * (cmark-gfm with its autolink extension).
 */
export const commonMarkExamplesChangedByGfm = new Map<number, string>([
  [602, '<p>&lt;<a href="https://foo.bar/baz">https://foo.bar/baz</a> bim&gt;</p>\n'],
  [608, '<p>&lt; <a href="https://foo.bar">https://foo.bar</a> &gt;</p>\n'],
  [611, '<p><a href="https://example.com">https://example.com</a></p>\n'],
  [612, '<p><a href="mailto:foo@bar.example.com">foo@bar.example.com</a></p>\n']
])
