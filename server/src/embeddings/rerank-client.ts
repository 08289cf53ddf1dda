import { Code, ConnectError } from "@connectrpc/connect";
import type { EndpointCall } from "./remote-embedder.js";

/** Scores candidate texts against a query; higher is more relevant. */
export interface Reranker {
  /** One score per text, in the order of `texts`. */
  rerank(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]>;
}

/**
 * A cross-encoder behind a TEI-shaped `POST {root}/rerank` (`{query, texts}` in, `[{index, score}]`
 * out, sorted by score; Infinity and vLLM's /rerank answer `{results: [{index, relevance_score}]}`,
 * read too). Scores come back in input order so callers can re-sort their own candidates.
 */
export class RerankClient implements Reranker {
  constructor(
    private readonly rootUrl: string,
    private readonly call: EndpointCall,
  ) {}

  async rerank(query: string, texts: readonly string[], signal?: AbortSignal): Promise<number[]> {
    if (texts.length === 0) return [];
    const answer = await this.call(`${this.rootUrl}/rerank`, { query, texts, truncate: true }, "rerank", signal);
    const rows = Array.isArray(answer)
      ? answer
      : typeof answer === "object" && answer !== null && "results" in answer && Array.isArray(answer.results)
        ? (answer.results as unknown[])
        : undefined;
    const scores = new Array<number>(texts.length).fill(Number.NaN);
    for (const row of rows ?? []) {
      if (typeof row !== "object" || row === null || !("index" in row)) continue;
      const score = "score" in row ? row.score : "relevance_score" in row ? row.relevance_score : undefined;
      if (typeof row.index === "number" && typeof score === "number" && row.index >= 0 && row.index < texts.length)
        scores[row.index] = score;
    }
    if (rows === undefined || scores.some(Number.isNaN))
      throw new ConnectError(
        "the rerank endpoint did not score every text (expected [{index, score}])",
        Code.Unavailable,
      );
    return scores;
  }
}
