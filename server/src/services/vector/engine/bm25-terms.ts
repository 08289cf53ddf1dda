import { textTokens } from "../../../embeddings/text-tokens.js";

/** BM25's term-frequency saturation: how fast repeated terms stop adding score. */
export const BM25_K1 = 1.2;
/** BM25's length normalisation: 0 ignores chunk length, 1 normalises fully. */
export const BM25_B = 0.75;

/** A chunk's terms with their frequencies, and its length in tokens. */
export interface ChunkTerms {
  readonly frequencies: Map<string, number>;
  readonly length: number;
}

/** The postings of one chunk, from the same tokeniser the lexical embedder uses. */
export function chunkTerms(content: string): ChunkTerms {
  const tokens = textTokens(content);
  const frequencies = new Map<string, number>();
  for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1);
  return { frequencies, length: tokens.length };
}

/** The distinct terms of a query; repeating a word in a query does not weigh it more. */
export function queryTerms(text: string): string[] {
  return [...new Set(textTokens(text))];
}
