/** RRF's constant: ranks beyond the first few still count, but the top of each list dominates. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): an item's score is the sum over the
 * lists of 1 / (k + rank), ranks from 1. It needs no score calibration between dense cosine and
 * BM25, which live on unrelated scales. Answers ids with their fused score, best first (ties by
 * the order of first appearance, so the result is deterministic).
 */
export function reciprocalRankFusion(
  lists: ReadonlyArray<readonly string[]>,
  k = RRF_K,
): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}
