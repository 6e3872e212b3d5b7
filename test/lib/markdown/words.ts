/**
 * Words of Markdown and of the HTML it renders to, to show that a bound changes only markup:
 * every word of the input is in the output's text, in order.
 */
const WORD = /[\p{L}\p{N}]+/gu
/** markdown-it's escapes; a separator, as the characters they stand for are. */
const ESCAPES = /&(?:amp|lt|gt|quot);/g
/** An image's words are its alt text; markdown-it escapes `"` and `>` in attribute values, so neither ends a match early. */
const IMAGE = /<img [^>]*?alt="([^"]*)"[^>]*>/g
const TAG = /<[^>]*>/g

/** Runs of letters and digits. */
export function wordsOf (text: string): string[] {
  return text.match(WORD) ?? []
}

/** The words a reader of this HTML sees: its text and its images' alt text, tags and attributes left out. */
export function wordsSeen (html: string): string[] {
  return wordsOf(html.replace(IMAGE, ' $1 ').replace(TAG, ' ').replace(ESCAPES, ' '))
}

/** How many of `words`, from the first, the HTML shows in that order (other words may come between). */
export function wordsKept (words: readonly string[], html: string): number {
  let kept = 0
  for (const seen of wordsSeen(html)) {
    if (kept < words.length && seen === words[kept]) kept++
  }
  return kept
}
