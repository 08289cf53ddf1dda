/**
 * The words of a text as the lexical embedder and BM25 see them: Unicode-normalised (NFKC),
 * lower-cased, split at every character that is neither a letter nor a digit. No stemming and no
 * stop words: both are language-specific, and BM25's IDF already weighs common words down.
 */
export function textTokens(text: string): string[] {
  const tokens = text
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return tokens.filter((token) => token.length > 0 && token.length <= MAX_TOKEN_LENGTH);
}

/** Longer runs (base64, hashes, minified code) are noise for both lexical scores, and would bloat the term table. */
export const MAX_TOKEN_LENGTH = 64;
