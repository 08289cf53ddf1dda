import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { callData, createBuckets, createOrganization, okData, type TestOrganization } from "./shared-server.js";

// Bring-your-own embeddings over plain HTTP on the data listener: a bucket made with the AWS SDK,
// vectors upserted into a table of its engine, queried under each metric, described, indexed and
// deleted, and another organization kept out.

interface QueryAnswer {
  matches: { id: string; score: number; metadata: Record<string, unknown> | null; values: number[] }[];
  metric: string;
}

let owner: TestOrganization;
let other: TestOrganization;
const bucket = `vec-${randomBytes(4).toString("hex")}`;
const vectors = `/${bucket}/tables/emb/vectors`;

beforeAll(async () => {
  [owner, other] = await Promise.all([createOrganization("vectors"), createOrganization("outsider")]);
  await createBuckets(owner, bucket);
});

describe("data-plane vectors over HTTP", () => {
  it("upserts into a new vector(3) table and answers distances under each metric", async () => {
    expect(
      await okData(
        callData(owner, "POST", vectors, {
          vectors: [
            { id: "a", values: [1, 0, 0], metadata: { kind: "x", n: 1 } },
            { id: "b", values: [0, 3, 4] },
            { id: "c", values: [2, 2, 1], metadata: { kind: "y" } },
          ],
        }),
      ),
    ).toEqual({ upsertedCount: 3, dimension: 3, tableCreated: true });

    const query = (metric: string, extra: Record<string, unknown> = {}) =>
      okData<QueryAnswer>(callData(owner, "POST", `${vectors}/query`, { vector: [1, 1, 0], metric, ...extra }));

    const cosine = await query("VECTOR_METRIC_COSINE", { includeMetadata: true });
    expect(cosine.metric).toBe("VECTOR_METRIC_COSINE");
    expect(cosine.matches.map((m) => m.id)).toEqual(["c", "a", "b"]);
    expect(cosine.matches[0]!.score).toBeCloseTo(1 - 4 / (3 * Math.SQRT2), 5);
    expect(cosine.matches[1]).toMatchObject({ id: "a", metadata: { kind: "x", n: 1 }, values: [] });
    expect(cosine.matches[2]!.score).toBeCloseTo(1 - 3 / (5 * Math.SQRT2), 5);

    // snake_case names are accepted too, and the metric by its number.
    const l2 = await query("VECTOR_METRIC_EUCLIDEAN", { top_k: 2, include_values: true });
    expect(l2.matches.map((m) => [m.id, m.values])).toEqual([
      ["a", [1, 0, 0]],
      ["c", [2, 2, 1]],
    ]);
    expect(l2.matches[1]!.score).toBeCloseTo(Math.sqrt(3), 5);

    const dot = await okData<QueryAnswer>(
      callData(owner, "POST", `${vectors}/query`, { vector: [1, 1, 0], metric: 3 }),
    );
    expect(dot.matches.map((m) => [m.id, m.score])).toEqual([
      ["c", -4],
      ["b", -3],
      ["a", -1],
    ]);
  });

  it("describes and indexes the table", async () => {
    const before = await okData(callData(owner, "GET", vectors));
    expect(before).toEqual({ table: "emb", dimension: 3, vectorCount: "3", indexedMetrics: [] });
    const indexed = await okData(callData(owner, "POST", `${vectors}/index`, { metric: "VECTOR_METRIC_COSINE" }));
    expect(indexed).toEqual({ table: "emb", dimension: 3, vectorCount: "3", indexedMetrics: ["VECTOR_METRIC_COSINE"] });
  });

  it("refuses bad input with 400 naming the field", async () => {
    const mismatch = await callData(owner, "POST", vectors, { vectors: [{ id: "d", values: [1, 2] }] });
    expect(mismatch).toEqual({
      status: 400,
      body: expect.objectContaining({
        code: "invalid_argument",
        message: "vectors[0].values has 2 dimensions; table emb holds vectors of 3",
      }),
    });
    const both = await callData(owner, "POST", `${vectors}/delete`, { ids: ["a"], all: true });
    expect([both.status, both.body.code]).toEqual([400, "invalid_argument"]);
    expect(both.body.message).toMatch(/^ids and all/);
    const neither = await callData(owner, "POST", `${vectors}/delete`, {});
    expect([neither.status, neither.body.message]).toEqual([400, expect.stringMatching(/^ids is required/)]);
    const badName = await callData(owner, "POST", `/${bucket}/tables/vc_abc/vectors`, {
      vectors: [{ id: "x", values: [1] }],
    });
    expect([badName.status, badName.body.message]).toEqual([400, expect.stringMatching(/^table "vc_abc" is reserved/)]);
    const noMetric = await callData(owner, "POST", `${vectors}/query`, { vector: [1, 1, 0] });
    expect([noMetric.status, noMetric.body.message]).toEqual([400, expect.stringMatching(/^metric is required/)]);
    const missing = await callData(owner, "POST", `/${bucket}/tables/nothing/vectors/query`, {
      vector: [1],
      metric: "VECTOR_METRIC_COSINE",
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("answers NOT_FOUND for another organization's bucket", async () => {
    for (const [method, path, body] of [
      ["POST", vectors, { vectors: [{ id: "z", values: [1, 1, 1] }] }],
      ["POST", `${vectors}/query`, { vector: [1, 1, 0], metric: "VECTOR_METRIC_COSINE" }],
      ["POST", `${vectors}/delete`, { all: true }],
      ["GET", vectors, undefined],
    ] as const) {
      const answer = await callData(other, method, path, body);
      expect([answer.status, answer.body.code, answer.body.message]).toEqual([
        404,
        "not_found",
        `bucket ${bucket} not found`,
      ]);
    }
    expect((await okData(callData(owner, "GET", vectors))).vectorCount).toBe("3");
  });

  it("deletes by ids, then all", async () => {
    expect(await okData(callData(owner, "POST", `${vectors}/delete`, { ids: ["a", "missing"] }))).toEqual({
      deletedCount: 1,
    });
    expect(await okData(callData(owner, "POST", `${vectors}/delete`, { all: true }))).toEqual({ deletedCount: 2 });
    expect((await okData(callData(owner, "GET", vectors))).vectorCount).toBe("0");
  });
});
