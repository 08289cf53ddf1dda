/** Length of a highlight in characters, about two lines of text. */
export const HIGHLIGHT_WIDTH = 200;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A short snippet of `content` around the densest run of query terms, the matches wrapped in
 * `<em>…</em>` (the convention of most search engines' highlighters) and cut edges marked with `…`.
 * Matching uses the tokeniser's normalisation (NFKC, lower case) on whole words. Without any match
 * the snippet is the start of the content. The text is not HTML-escaped: it is the chunk as stored.
 */
export function highlightSnippet(content: string, terms: readonly string[], width = HIGHLIGHT_WIDTH): string {
  const wanted = new Set(terms);
  const matches: Array<{ start: number; end: number; term: string }> = [];
  for (const match of content.matchAll(WORD)) {
    const term = match[0].normalize("NFKC").toLowerCase();
    if (wanted.has(term)) matches.push({ start: match.index, end: match.index + match[0].length, term });
  }
  if (matches.length === 0) return content.length <= width ? content : `${content.slice(0, width).trimEnd()}…`;
  // The window holding the most distinct terms wins, then the most matches; it starts at a match.
  let best = { from: 0, to: 0, distinct: 0, count: 0 };
  for (let i = 0; i < matches.length; i++) {
    const from = (matches[i] as { start: number }).start;
    const distinct = new Set<string>();
    let to = i;
    while (to < matches.length && (matches[to] as { end: number }).end - from <= width) {
      distinct.add((matches[to] as { term: string }).term);
      to++;
    }
    if (distinct.size > best.distinct || (distinct.size === best.distinct && to - i > best.count))
      best = { from: i, to, distinct: distinct.size, count: to - i };
  }
  const first = matches[best.from] as { start: number };
  const last = matches[best.to - 1] as { end: number };
  // Centre the matched run in the window.
  const slack = Math.max(0, width - (last.end - first.start));
  let start = Math.max(0, first.start - Math.floor(slack / 2));
  const end = Math.min(content.length, start + width);
  start = Math.max(0, Math.min(start, end - width));
  let snippet = "";
  let cursor = start;
  for (const match of matches.slice(best.from, best.to)) {
    snippet += `${content.slice(cursor, match.start)}<em>${content.slice(match.start, match.end)}</em>`;
    cursor = match.end;
  }
  snippet += content.slice(cursor, end);
  return `${start > 0 ? "…" : ""}${snippet}${end < content.length ? "…" : ""}`;
}
