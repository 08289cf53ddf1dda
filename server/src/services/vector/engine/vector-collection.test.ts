import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { denseSearch, hybridSearch, lexicalSearch } from "./collection-search.js";
import { engineBackends, testPhysicalName } from "./engine-test-backends.js";
import { FilterOp, LogicalOp } from "./metadata-filter.js";
import { reciprocalRankFusion } from "./reciprocal-rank-fusion.js";
import type { SqlExecutor } from "./sql-executor.js";
import { VectorCollection, type ChunkInput } from "./vector-collection.js";

const unit = (...values: number[]) => {
  const norm = Math.hypot(...values);
  return values.map((v) => v / norm);
};

function chunk(
  chunkIndex: number,
  embedding: number[],
  metadata: Record<string, unknown> = {},
  content = "",
  partition?: string,
): ChunkInput {
  return { chunkIndex, embedding, metadata, content, ...(partition === undefined ? {} : { partition }) };
}

async function codeOf(work: () => Promise<unknown>): Promise<[Code, string]> {
  try {
    await work();
  } catch (error) {
    const e = ConnectError.from(error);
    return [e.code, e.rawMessage];
  }
  throw new Error("expected a failure");
}

describe.each(engineBackends)("vector collection on $name", (backend) => {
  let executor: SqlExecutor;
  let close: () => Promise<void>;
  const created: VectorCollection[] = [];
  const collection = (dimensions: number) => {
    const c = new VectorCollection(executor, { physicalName: testPhysicalName(), dimensions });
    created.push(c);
    return c;
  };

  beforeAll(async () => {
    ({ executor, close } = await backend.open());
  }, 60_000);
  afterAll(async () => {
    for (const c of created) await c.drop();
    await close();
  });

  it("creates on first upsert, replaces an object's chunks, deletes by source key, drops", async () => {
    const c = collection(3);
    expect(await c.exists()).toBe(false);
    expect(await denseSearch(c, [[1, 0, 0]])).toEqual([]);
    await c.upsertObject("a.txt", [
      chunk(0, [1, 0, 0], {}, "alpha one"),
      chunk(1, [0, 1, 0], {}, "alpha two"),
      chunk(2, [0, 0, 1]),
    ]);
    await c.upsertObject("b.txt", [chunk(0, [1, 1, 0], {}, "beta")]);
    expect(await c.count()).toBe(4);
    // Replacing a.txt with one chunk removes its other two.
    await c.upsertObject("a.txt", [chunk(0, [0, 0, 1], { v: 2 }, "alpha again")]);
    const ids = (await executor.query<{ id: string }>(`SELECT id FROM ${c.tables.chunks} ORDER BY id`)).map(
      (r) => r.id,
    );
    expect(ids).toEqual(["a.txt#0", "b.txt#0"]);
    const [top] = await denseSearch(c, [[0, 0, 1]], { topK: 1, includeContent: true });
    expect(top).toMatchObject({
      id: "a.txt#0",
      sourceKey: "a.txt",
      chunkIndex: 0,
      content: "alpha again",
      metadata: { v: "2" },
      source: "VECTOR",
    });
    expect(top?.score).toBeCloseTo(1, 5);
    expect(await c.deleteObject("a.txt")).toBe(1);
    expect(await c.deleteObject("a.txt")).toBe(0);
    expect(await c.count()).toBe(1);
    await c.drop();
    expect(await c.exists()).toBe(false);
  });

  it("refuses bad chunks by field and another dimension for an existing table", async () => {
    const c = collection(3);
    expect(await codeOf(() => c.upsertObject("x", [chunk(0, [1, 2])]))).toEqual([
      Code.InvalidArgument,
      "chunks[0].embedding has 2 dimensions; the collection has 3",
    ]);
    expect((await codeOf(() => c.upsertObject("x", [chunk(0, [1, Number.NaN, 0])])))[1]).toBe(
      "chunks[0].embedding[1] must be a finite number",
    );
    expect((await codeOf(() => c.upsertObject("x", [chunk(0, [1, 0, 0]), chunk(0, [1, 0, 0])])))[1]).toContain(
      "appears twice",
    );
    await c.upsertObject("x", [chunk(0, [1, 0, 0])]);
    const same = new VectorCollection(executor, { physicalName: c.options.physicalName, dimensions: 4 });
    expect((await codeOf(() => same.upsertObject("y", [chunk(0, [1, 0, 0, 0])])))[0]).toBe(Code.FailedPrecondition);
    expect((await codeOf(() => denseSearch(c, [[1, 0]])))[1]).toBe(
      "vector.values has 2 dimensions; the collection has 3",
    );
    expect((await codeOf(() => denseSearch(c, [[1, 0, 0]], { searchParams: { ef: "0" } })))[1]).toContain(
      "searchParams.ef",
    );
    expect((await codeOf(() => denseSearch(c, [[1, 0, 0]], { searchParams: { metric_type: "L2" } })))[0]).toBe(
      Code.InvalidArgument,
    );
    expect((await codeOf(() => denseSearch(c, [[1, 0, 0]], { topK: 5000 })))[1]).toContain("topK");
    expect((await codeOf(() => denseSearch(c, [])))[1]).toBe("vector: give values or vectors");
    expect(
      (
        await codeOf(() =>
          denseSearch(
            c,
            Array.from({ length: 65 }, () => [1, 0, 0]),
          ),
        )
      )[1],
    ).toContain("at most 64");
    expect(
      (
        await codeOf(() =>
          denseSearch(c, [
            [1, 0, 0],
            [1, 0],
          ]),
        )
      )[1],
    ).toBe("vector.vectors[1].values has 2 dimensions; the collection has 3");
  });

  describe("metadata filters", () => {
    let c: VectorCollection;
    const rows: Array<Record<string, unknown>> = [
      { name: "a", n: 1, s: "10", date: "2025-01-01T00:00:00Z", tag: "red" },
      { name: "b", n: 2, s: "9", date: "2025-02-01T00:00:00Z", tag: "green" },
      { name: "c", n: 3.5, s: "abc", date: "2025-03-01T00:00:00Z", flag: true },
      { name: "d", n: 10, date: "2024-12-31T00:00:00Z", tag: null },
      { name: "e", s: "hello world" },
    ];
    beforeAll(async () => {
      c = collection(2);
      for (const [index, metadata] of rows.entries())
        await c.upsertObject(String(metadata.name), [
          chunk(0, unit(1, index + 1), metadata, "", index % 2 === 0 ? "even" : "odd"),
        ]);
    });
    const names = async (filters: Array<[string, FilterOp, string]>, op = LogicalOp.AND) => {
      const hits = await denseSearch(c, [[1, 0]], {
        topK: 10,
        filter: { op, filters: filters.map(([field, o, value]) => ({ field, op: o, value })) },
      });
      return hits.map((h) => h.sourceKey).sort();
    };

    it("compares numbers numerically, strings by bytes, and excludes records lacking the field", async () => {
      expect(await names([["n", FilterOp.EQ, "2"]])).toEqual(["b"]);
      expect(await names([["n", FilterOp.EQ, "2.0"]])).toEqual(["b"]);
      expect(await names([["name", FilterOp.EQ, "c"]])).toEqual(["c"]);
      expect(await names([["flag", FilterOp.EQ, "true"]])).toEqual(["c"]);
      expect(await names([["n", FilterOp.NEQ, "2"]])).toEqual(["a", "c", "d"]);
      expect(await names([["tag", FilterOp.NEQ, "red"]])).toEqual(["b"]);
      expect(await names([["n", FilterOp.GT, "2"]])).toEqual(["c", "d"]);
      expect(await names([["n", FilterOp.GTE, "2"]])).toEqual(["b", "c", "d"]);
      expect(await names([["n", FilterOp.LT, "3.5"]])).toEqual(["a", "b"]);
      expect(await names([["n", FilterOp.LTE, "3.5"]])).toEqual(["a", "b", "c"]);
      // "10" > "9" as numbers although both are strings; "abc" and "hello world" compare as strings.
      expect(await names([["s", FilterOp.GT, "9"]])).toEqual(["a", "c", "e"]);
      expect(await names([["s", FilterOp.LT, "9.5"]])).toEqual(["b"]);
      expect(await names([["s", FilterOp.GT, "b"]])).toEqual(["e"]);
      expect(await names([["date", FilterOp.GTE, "2025-02-01T00:00:00Z"]])).toEqual(["b", "c"]);
      expect(await names([["date", FilterOp.LT, "2025"]])).toEqual(["d"]);
    });

    it("handles IN, CONTAINS, EXISTS, AND/OR and nested groups", async () => {
      expect(await names([["name", FilterOp.IN, "a, c,zz"]])).toEqual(["a", "c"]);
      expect(await names([["n", FilterOp.IN, "1,10"]])).toEqual(["a", "d"]);
      expect(await names([["s", FilterOp.CONTAINS, "wor"]])).toEqual(["e"]);
      expect(await names([["n", FilterOp.CONTAINS, "1"]])).toEqual([]);
      expect(await names([["tag", FilterOp.EXISTS, ""]])).toEqual(["a", "b"]);
      expect(
        await names([
          ["n", FilterOp.GT, "1"],
          ["tag", FilterOp.EXISTS, ""],
        ]),
      ).toEqual(["b"]);
      expect(
        await names(
          [
            ["name", FilterOp.EQ, "a"],
            ["name", FilterOp.EQ, "e"],
          ],
          LogicalOp.OR,
        ),
      ).toEqual(["a", "e"]);
      const nested = await denseSearch(c, [[1, 0]], {
        filter: {
          op: LogicalOp.OR,
          filters: [{ field: "name", op: FilterOp.EQ, value: "e" }],
          groups: [
            {
              filters: [
                { field: "n", op: FilterOp.GTE, value: "2" },
                { field: "n", op: FilterOp.LT, value: "10" },
              ],
            },
          ],
        },
      });
      expect(nested.map((h) => h.sourceKey).sort()).toEqual(["b", "c", "e"]);
      expect((await denseSearch(c, [[1, 0]], { partitionNames: ["odd"] })).map((h) => h.sourceKey).sort()).toEqual([
        "b",
        "d",
      ]);
    });

    it("names the bad field or op", async () => {
      expect(await codeOf(() => names([["bad field", FilterOp.EQ, "x"]]))).toEqual([
        Code.InvalidArgument,
        expect.stringContaining('preFilter.filters[0].field: "bad field" is not a metadata field name'),
      ]);
      expect((await codeOf(() => names([["n", FilterOp.UNSPECIFIED, "x"]])))[1]).toContain("preFilter.filters[0].op");
      expect((await codeOf(() => names([["n", FilterOp.IN, " , "]])))[1]).toContain("preFilter.filters[0].value");
    });

    it("returns output fields only, stringified, with highlights", async () => {
      const [hit] = await denseSearch(c, [[1, 0]], {
        topK: 1,
        outputFields: ["n", "missing"],
        filter: { filters: [{ field: "name", op: FilterOp.EQ, value: "d" }] },
      });
      expect(hit?.metadata).toEqual({ n: "10" });
    });
  });

  it("filtered HNSW search returns min(topK, matches) at every selectivity, exact and HNSW plans agreeing", async () => {
    const c = collection(8);
    const random = mulberry32(7);
    const objects = Array.from({ length: 600 }, (_, i) => ({
      key: `o${i}`,
      vector: Array.from({ length: 8 }, () => random() - 0.5),
      bucket: i % 100,
    }));
    for (let start = 0; start < objects.length; start += 100)
      await Promise.all(
        objects.slice(start, start + 100).map((o) => c.upsertObject(o.key, [chunk(0, o.vector, { bucket: o.bucket })])),
      );
    const query = Array.from({ length: 8 }, () => random() - 0.5);
    for (const [matches, value] of [
      [6, "1"],
      [60, "10"],
      [300, "50"],
    ] as const) {
      const filter = { filters: [{ field: "bucket", op: FilterOp.LT, value }] };
      for (const plan of ["hnsw", "exact", "auto"] as const) {
        const hits = await denseSearch(c, [query], {
          topK: 10,
          filter,
          plan,
          exactScanThreshold: 50,
          searchParams: { ef: "10" },
        });
        expect(hits, `${plan} ${matches}`).toHaveLength(Math.min(10, matches));
        expect(hits.every((h) => Number(h.metadata.bucket) < Number(value))).toBe(true);
      }
    }
    // A batch: each query answered on its own, tagged with its index.
    const batch = await denseSearch(c, [query, objects[3]!.vector], { topK: 2 });
    expect(batch.map((h) => h.queryIndex)).toEqual([0, 0, 1, 1]);
    expect(batch[2]).toMatchObject({ id: "o3#0" });
  });

  it("scores BM25 exactly as computed by hand, keeping statistics on replace and delete", async () => {
    const c = collection(2);
    await c.upsertObject("d1", [chunk(0, [1, 0], {}, "the quick brown fox")]);
    await c.upsertObject("d2", [
      chunk(0, [0, 1], {}, "the lazy dog"),
      chunk(1, [1, 1], {}, "quick quick dog runs far away"),
    ]);
    await c.upsertObject("gone", [chunk(0, [1, 0], {}, "fox fox fox fox")]);
    await c.deleteObject("gone");
    await c.upsertObject("d1", [chunk(0, [1, 0], {}, "the quick brown fox jumps")]);
    // Corpus now: d1#0 (5 tokens), d2#0 (3), d2#1 (6); avgdl = 14/3.
    const n = 3;
    const avgdl = 14 / 3;
    const hits = await lexicalSearch(c, "quick dog", { includeHighlights: true });
    const expected = {
      "d2#1": bm25Term(2, 2, n, 6, avgdl) + bm25Term(1, 2, n, 6, avgdl),
      "d1#0": bm25Term(1, 2, n, 5, avgdl),
      "d2#0": bm25Term(1, 2, n, 3, avgdl),
    };
    expect(hits.map((h) => h.id)).toEqual(["d2#1", "d2#0", "d1#0"]);
    for (const hit of hits) expect(hit.score).toBeCloseTo(expected[hit.id as keyof typeof expected], 9);
    expect(hits[0]).toMatchObject({
      source: "FULLTEXT",
      highlight: "<em>quick</em> <em>quick</em> <em>dog</em> runs far away",
    });
    // "fox" only in d1#0 now (df 1): the deleted object no longer counts.
    const [fox] = await lexicalSearch(c, "fox");
    expect(fox?.score).toBeCloseTo(bm25Term(1, 1, n, 5, avgdl), 9);
    expect(await lexicalSearch(c, "...")).toEqual([]);
  });

  it("keeps BM25 statistics equal to a recount under concurrent writers of one collection", async () => {
    const c = collection(2);
    const words = ["alpha", "beta", "gamma", "delta", "epsilon"];
    const writes = Array.from({ length: 24 }, (_, i) =>
      c.upsertObject(`k${i % 6}`, [
        chunk(0, [1, i + 1], {}, `${words[i % 5]} ${words[(i + 1) % 5]} ${words[(i * 3) % 5]}`),
        chunk(1, [i + 1, 1], {}, words.slice(0, (i % 5) + 1).join(" ")),
      ]),
    );
    await Promise.all([...writes, c.deleteObject("k5")]);
    const [stats] = await executor.query<{ doc_count: number; total_length: number }>(
      `SELECT doc_count::int AS doc_count, total_length::int AS total_length FROM ${c.tables.stats}`,
    );
    const [recount] = await executor.query<{ n: number; len: number }>(
      `SELECT count(*)::int AS n, coalesce(sum(doc_length), 0)::int AS len FROM ${c.tables.chunks}`,
    );
    expect(stats).toEqual({ doc_count: recount?.n, total_length: recount?.len });
    const drift = await executor.query(
      `SELECT d.term FROM ${c.tables.df} d
       LEFT JOIN (SELECT term, count(*)::int AS n FROM ${c.tables.terms} GROUP BY term) t ON t.term = d.term
       WHERE d.df <> coalesce(t.n, 0)`,
    );
    expect(drift).toEqual([]);
  });

  it("fuses dense and BM25 with RRF k=60", async () => {
    const c = collection(2);
    await c.upsertObject("x", [chunk(0, unit(1, 0), {}, "apples and pears")]);
    await c.upsertObject("y", [chunk(0, unit(1, 0.2), {}, "bananas")]);
    await c.upsertObject("z", [chunk(0, unit(0, 1), {}, "pears pears pears")]);
    const hits = await hybridSearch(c, [1, 0], "pears");
    const dense = ["x#0", "y#0", "z#0"];
    const lexical = ["z#0", "x#0"];
    const fused = reciprocalRankFusion([dense, lexical]);
    expect(hits.map((h) => [h.id, h.source])).toEqual(fused.map((f) => [f.id, "HYBRID"]));
    expect(hits[0]?.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
  });

  it("reranks candidates with the rerank hook", async () => {
    const c = collection(2);
    await c.upsertObject("p", [chunk(0, unit(1, 0), {}, "short")]);
    await c.upsertObject("q", [chunk(0, unit(1, 0.5), {}, "a much longer text")]);
    const reranker = { rerank: (_q: string, texts: readonly string[]) => Promise.resolve(texts.map((t) => t.length)) };
    const hits = await denseSearch(c, [[1, 0]], { topK: 1, rerank: { reranker, query: "q" } });
    expect(hits).toMatchObject([{ id: "q#0", score: 18 }]);
    expect(hits[0]?.content).toBeUndefined();
  });
});

/** Okapi BM25 of one posting written out by hand (k1 1.2, b 0.75, Lucene's IDF), independent of the engine's constants. */
function bm25Term(tf: number, df: number, docCount: number, length: number, averageLength: number): number {
  const idf = Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
  return (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / averageLength));
}

/** A small seeded generator, so the test's vectors are the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
