/** What the fan-out needs to know of a collection (a vector destination of the bucket). */
export interface FanOutCollection {
  /** destination.name, reported in collectionStatuses. */
  readonly name: string;
  readonly dimensions: number;
  /** EMBEDDING_TYPE_FLOAT etc., as a string so any enum rendering works. */
  readonly embeddingType: string;
  /** The model id the collection's vectors were made with (resolved; may be the local embedder's). */
  readonly embedModel: string;
}

/** One row of SearchResponse.collection_statuses. */
export interface CollectionStatusRow {
  readonly collection: string;
  readonly embeddingCompleted: boolean;
  readonly searchCompleted: boolean;
  readonly failReason: string;
}

/** A hit with the collection it came from. */
export interface ScoredHit {
  readonly score: number;
}

export type FanOutQuery =
  /** Caller vectors of this length: the group must have these dimensions. */
  | { readonly kind: "vector"; readonly dimensions: number }
  /** Text (or an object) embedded server-side: the first collection's group is used. */
  | { readonly kind: "text" };

/** The compatibility key: vectors are only ever compared within one (dimensions, type, model). */
export function compatibilityKey(collection: FanOutCollection): string {
  return `${collection.dimensions}\u0000${collection.embeddingType}\u0000${collection.embedModel}`;
}

/**
 * Picks the collections one search may fuse: groups them by (dimensions, embedding_type,
 * embed_model) and takes the group of the first collection that fits the query (for a text query
 * the first collection with a model; for caller vectors the first with their dimensions). The
 * others are skipped with a failReason saying what differs.
 */
export function chooseCompatibleGroup<C extends FanOutCollection>(
  collections: readonly C[],
  query: FanOutQuery,
): { readonly chosen: C[]; readonly skipped: CollectionStatusRow[] } {
  const leader = collections.find((c) =>
    query.kind === "vector" ? c.dimensions === query.dimensions : c.embedModel !== "",
  );
  const chosen: C[] = [];
  const skipped: CollectionStatusRow[] = [];
  for (const collection of collections) {
    if (leader !== undefined && compatibilityKey(collection) === compatibilityKey(leader)) {
      chosen.push(collection);
      continue;
    }
    skipped.push({
      collection: collection.name,
      embeddingCompleted: false,
      searchCompleted: false,
      failReason: leader === undefined ? noLeaderReason(collection, query) : differenceReason(collection, leader),
    });
  }
  return { chosen, skipped };
}

function noLeaderReason(collection: FanOutCollection, query: FanOutQuery): string {
  if (query.kind === "vector")
    return `incompatible dimensions: the query vector has ${query.dimensions}, the collection ${collection.dimensions}`;
  return "the collection has no embed_model: send a vector query instead";
}

function differenceReason(collection: FanOutCollection, leader: FanOutCollection): string {
  const differences: string[] = [];
  if (collection.dimensions !== leader.dimensions)
    differences.push(`dimensions ${collection.dimensions} (searched: ${leader.dimensions})`);
  if (collection.embeddingType !== leader.embeddingType)
    differences.push(`embedding type ${collection.embeddingType} (searched: ${leader.embeddingType})`);
  if (collection.embedModel !== leader.embedModel)
    differences.push(`embed model ${collection.embedModel || "(none)"} (searched: ${leader.embedModel})`);
  return `incompatible with the searched collections: ${differences.join(", ")}`;
}

/**
 * Searches every chosen collection (at most `concurrency` at once), merges the hits by score (best
 * first, cut to topK) and reports each collection's outcome; a collection whose search fails is a
 * failReason, not an error of the whole search. `describeError` turns an error into the reason a
 * caller may see (no SQL, no stack).
 */
export async function fanOutSearch<C extends FanOutCollection, H extends ScoredHit>(
  collections: readonly C[],
  query: FanOutQuery,
  topK: number,
  searchOne: (collection: C) => Promise<H[]>,
  describeError: (error: unknown) => string,
  concurrency = 4,
): Promise<{ hits: Array<H & { collection: string }>; statuses: CollectionStatusRow[] }> {
  const { chosen, skipped } = chooseCompatibleGroup(collections, query);
  const outcomes = new Array<{ hits: Array<H & { collection: string }>; status: CollectionStatusRow }>(chosen.length);
  let next = 0;
  const worker = async () => {
    while (next < chosen.length) {
      const index = next++;
      const collection = chosen[index] as C;
      try {
        const hits = (await searchOne(collection)).map((hit) => ({ ...hit, collection: collection.name }));
        outcomes[index] = { hits, status: status(collection.name, "") };
      } catch (error) {
        outcomes[index] = { hits: [], status: status(collection.name, describeError(error) || "search failed") };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chosen.length) }, worker));
  const hits = outcomes
    .flatMap((outcome) => outcome.hits)
    .sort((a, b) => b.score - a.score)
    .slice(0, topK);
  const byName = new Map([
    ...outcomes.map((o) => [o.status.collection, o.status] as const),
    ...skipped.map((s) => [s.collection, s] as const),
  ]);
  // Statuses in the order the collections were given.
  const statuses = collections.map((c) => byName.get(c.name) as CollectionStatusRow);
  return { hits, statuses };
}

function status(collection: string, failReason: string): CollectionStatusRow {
  return { collection, embeddingCompleted: failReason === "", searchCompleted: failReason === "", failReason };
}
