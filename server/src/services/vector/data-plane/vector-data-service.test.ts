import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateVectorIndexRequestSchema,
  DeleteVectorsRequestSchema,
  DescribeVectorTableRequestSchema,
  DeleteVectorsResponseSchema,
  QueryVectorsRequestSchema,
  QueryVectorsResponseSchema,
  UpsertVectorsRequestSchema,
  UpsertVectorsResponseSchema,
  VectorTableSchema,
  VectorMetric,
} from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
import { connectErrorOf, openVectorFixture, type VectorFixture } from "../vector-test-fixture.js";
import { createVectorDataService } from "./vector-data-service.js";

// The handlers over a real engine: the bucket's implicit auto engine, provisioned on first use,
// in the embedded vector database, or in a database of its own on TEST_DATABASE_URL's server.

let fixture: VectorFixture;
const buckets = new Set<string>();
let service: ReturnType<typeof createVectorDataService>;

beforeAll(async () => {
  fixture = await openVectorFixture();
  service = createVectorDataService({
    buckets: { exists: async (orgId, bucket) => buckets.has(`${orgId}/${bucket}`) },
    engineDatabase: (orgId, bucket) => fixture.service.engineDatabase(orgId, bucket),
  });
});
afterAll(() => fixture?.close());

async function caller(...bucketNames: string[]) {
  const orgId = await fixture.database.createOrganization();
  for (const name of bucketNames) buckets.add(`${orgId}/${name}`);
  const context = fixture.contextOf(orgId);
  return {
    orgId,
    upsert: async (init: MessageInitShape<typeof UpsertVectorsRequestSchema>) =>
      create(
        UpsertVectorsResponseSchema,
        await service.upsertVectors(create(UpsertVectorsRequestSchema, init), context),
      ),
    query: async (init: MessageInitShape<typeof QueryVectorsRequestSchema>) =>
      create(QueryVectorsResponseSchema, await service.queryVectors(create(QueryVectorsRequestSchema, init), context)),
    remove: async (init: MessageInitShape<typeof DeleteVectorsRequestSchema>) =>
      create(
        DeleteVectorsResponseSchema,
        await service.deleteVectors(create(DeleteVectorsRequestSchema, init), context),
      ),
    describe: async (init: MessageInitShape<typeof DescribeVectorTableRequestSchema>) =>
      create(
        VectorTableSchema,
        await service.describeVectorTable(create(DescribeVectorTableRequestSchema, init), context),
      ),
    index: async (init: MessageInitShape<typeof CreateVectorIndexRequestSchema>) =>
      create(VectorTableSchema, await service.createVectorIndex(create(CreateVectorIndexRequestSchema, init), context)),
  };
}

const seed = [
  { id: "a", values: [1, 0, 0], metadata: { kind: "x" } },
  { id: "b", values: [0, 3, 4] },
  { id: "c", values: [2, 2, 1] },
];

describe("vector data service", () => {
  it("upserts, queries each metric against hand-computed distances, describes and indexes", async () => {
    const me = await caller("docs");
    expect(await me.upsert({ bucket: "docs", table: "emb", vectors: seed })).toMatchObject({
      upsertedCount: 3,
      dimension: 3,
      tableCreated: true,
    });
    const at = { bucket: "docs", table: "emb", vector: [1, 1, 0] };
    const cosine = await me.query({ ...at, metric: VectorMetric.COSINE, includeMetadata: true });
    expect(cosine.metric).toBe(VectorMetric.COSINE);
    expect(cosine.matches.map((m) => m.id)).toEqual(["c", "a", "b"]);
    expect(cosine.matches[0]!.score).toBeCloseTo(1 - 4 / (3 * Math.SQRT2), 5);
    expect(cosine.matches[1]).toMatchObject({ id: "a", metadata: { kind: "x" }, values: [] });
    expect(cosine.matches[1]!.score).toBeCloseTo(1 - 1 / Math.SQRT2, 5);
    expect(cosine.matches[2]!.score).toBeCloseTo(1 - 3 / (5 * Math.SQRT2), 5);
    expect(cosine.matches[2]!.metadata).toBeUndefined();

    const l2 = await me.query({ ...at, metric: VectorMetric.EUCLIDEAN, topK: 2, includeValues: true });
    expect(l2.matches.map((m) => [m.id, m.values])).toEqual([
      ["a", [1, 0, 0]],
      ["c", [2, 2, 1]],
    ]);
    expect(l2.matches[0]!.score).toBeCloseTo(1, 5);
    expect(l2.matches[1]!.score).toBeCloseTo(Math.sqrt(3), 5);

    const dot = await me.query({ ...at, metric: VectorMetric.DOT_PRODUCT });
    expect(dot.matches.map((m) => [m.id, m.score])).toEqual([
      ["c", -4],
      ["b", -3],
      ["a", -1],
    ]);

    const described = await me.index({ bucket: "docs", table: "emb", metric: VectorMetric.EUCLIDEAN });
    expect(described).toMatchObject({
      table: "emb",
      dimension: 3,
      vectorCount: 3n,
      indexedMetrics: [VectorMetric.EUCLIDEAN],
    });
    expect(await me.describe({ bucket: "docs", table: "emb" })).toEqual(described);
  });

  it("refuses a vector of another length, naming the field", async () => {
    const me = await caller("docs");
    await me.upsert({ bucket: "docs", table: "emb", vectors: seed });
    const error = await connectErrorOf(() =>
      me.upsert({
        bucket: "docs",
        table: "emb",
        vectors: [
          { id: "d", values: [1, 2, 3] },
          { id: "e", values: [1, 2] },
        ],
      }),
    );
    expect([error.code, error.rawMessage]).toEqual([
      Code.InvalidArgument,
      "vectors[1].values has 2 dimensions; table emb holds vectors of 3",
    ]);
    const query = await connectErrorOf(() =>
      me.query({ bucket: "docs", table: "emb", vector: [1, 2], metric: VectorMetric.COSINE }),
    );
    expect([query.code, query.rawMessage]).toEqual([Code.InvalidArgument, expect.stringMatching(/^vector has 2/)]);
  });

  it("deletes by ids or all, and refuses both and neither", async () => {
    const me = await caller("docs");
    await me.upsert({ bucket: "docs", table: "emb", vectors: seed });
    const both = await connectErrorOf(() => me.remove({ bucket: "docs", table: "emb", ids: ["a"], all: true }));
    expect([both.code, both.rawMessage]).toEqual([
      Code.InvalidArgument,
      expect.stringMatching(/^ids and all are exclusive/),
    ]);
    const neither = await connectErrorOf(() => me.remove({ bucket: "docs", table: "emb" }));
    expect([neither.code, neither.rawMessage]).toEqual([
      Code.InvalidArgument,
      expect.stringMatching(/^ids is required/),
    ]);
    expect((await me.describe({ bucket: "docs", table: "emb" })).vectorCount).toBe(3n);

    expect(await me.remove({ bucket: "docs", table: "emb", ids: ["a", "zz"] })).toMatchObject({ deletedCount: 1 });
    expect(await me.remove({ bucket: "docs", table: "emb", all: true })).toMatchObject({ deletedCount: 2 });
    expect(await me.remove({ bucket: "docs", table: "never", all: true })).toMatchObject({ deletedCount: 0 });
    const emptyId = await connectErrorOf(() => me.remove({ bucket: "docs", table: "emb", ids: ["a", ""] }));
    expect(emptyId.rawMessage).toBe("ids[1] is required");
  });

  it.each([
    ["Emb", "must be 1-48 characters"],
    ["vc_0123456789abcdef0123456789abcdef", "starting with vc_"],
    ["emb__terms", "holding __"],
    ["", "table is required"],
  ])("refuses the table name %j, naming table", async (table, reason) => {
    const me = await caller("docs");
    const error = await connectErrorOf(() => me.upsert({ bucket: "docs", table, vectors: seed }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/^table /);
    expect(error.rawMessage).toContain(reason);
  });

  it("refuses a missing metric, a topK out of range and a missing query", async () => {
    const me = await caller("docs");
    const at = { bucket: "docs", table: "emb", vector: [1, 1, 0] };
    expect((await connectErrorOf(() => me.query(at))).rawMessage).toMatch(/^metric is required/);
    expect((await connectErrorOf(() => me.index({ bucket: "docs", table: "emb" }))).rawMessage).toMatch(
      /^metric is required/,
    );
    const big = await connectErrorOf(() => me.query({ ...at, metric: VectorMetric.COSINE, topK: 1001 }));
    expect([big.code, big.rawMessage]).toEqual([
      Code.InvalidArgument,
      expect.stringMatching(/^topK must be between 1 and 1000/),
    ]);
    expect((await connectErrorOf(() => me.query({ ...at, metric: VectorMetric.COSINE, topK: -1 }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await connectErrorOf(() => me.query({ ...at, vector: [], metric: VectorMetric.COSINE }))).rawMessage).toBe(
      "vector is required",
    );
    const missing = await connectErrorOf(() => me.query({ ...at, table: "nothing", metric: VectorMetric.COSINE }));
    expect([missing.code, missing.rawMessage]).toEqual([Code.NotFound, "table nothing does not exist"]);
  });

  it("keeps organizations apart: another organization's bucket is NOT_FOUND", async () => {
    const owner = await caller("shared");
    await owner.upsert({ bucket: "shared", table: "emb", vectors: seed });
    const other = await caller("mine");
    for (const attempt of [
      () => other.upsert({ bucket: "shared", table: "emb", vectors: seed }),
      () => other.query({ bucket: "shared", table: "emb", vector: [1, 1, 0], metric: VectorMetric.COSINE }),
      () => other.remove({ bucket: "shared", table: "emb", all: true }),
      () => other.describe({ bucket: "shared", table: "emb" }),
      () => other.index({ bucket: "shared", table: "emb", metric: VectorMetric.COSINE }),
    ]) {
      const error = await connectErrorOf(attempt);
      expect([error.code, error.rawMessage]).toEqual([Code.NotFound, "bucket shared not found"]);
    }
    // Its own bucket of another name has its own engine: the owner's table is not there.
    expect((await connectErrorOf(() => other.describe({ bucket: "mine", table: "emb" }))).code).toBe(Code.NotFound);
    expect((await owner.describe({ bucket: "shared", table: "emb" })).vectorCount).toBe(3n);
  });
});
