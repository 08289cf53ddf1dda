import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  VectorMetric,
  VectorRecordSchema,
  type VectorRecord,
} from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
import { engineBackends } from "../engine/engine-test-backends.js";
import type { SqlExecutor } from "../engine/sql-executor.js";
import { PlainVectorTable } from "./plain-vector-table.js";
import { metricSql } from "./vector-metric.js";

const record = (id: string, values: number[], metadata?: Record<string, string | number>): VectorRecord =>
  create(VectorRecordSchema, { id, values, ...(metadata ? { metadata } : {}) });

async function errorOf(work: () => Promise<unknown>): Promise<[Code, string]> {
  try {
    await work();
  } catch (error) {
    const e = ConnectError.from(error);
    return [e.code, e.rawMessage];
  }
  throw new Error("expected a failure");
}

/** A table name no other run uses (PostgreSQL is shared between runs). */
const tableName = () => `t_${randomUUID().replaceAll("-", "").slice(0, 16)}`;

// Three vectors and a query whose nearest-first order differs under each metric. With q = [1,1,0]:
//   a = [1,0,0]: cosine 1 - 1/√2,        L2 1,   inner product 1
//   b = [0,3,4]: cosine 1 - 3/(5·√2),    L2 √21, inner product 3
//   c = [2,2,1]: cosine 1 - 4/(3·√2),    L2 √3,  inner product 4
const query = [1, 1, 0];
const expected: Record<"cosine" | "euclidean" | "dot", Array<[string, number]>> = {
  cosine: [
    ["c", 1 - 4 / (3 * Math.SQRT2)],
    ["a", 1 - 1 / Math.SQRT2],
    ["b", 1 - 3 / (5 * Math.SQRT2)],
  ],
  euclidean: [
    ["a", 1],
    ["c", Math.sqrt(3)],
    ["b", Math.sqrt(21)],
  ],
  // pgvector's <#> is the negative inner product, so that lower is closer.
  dot: [
    ["c", -4],
    ["b", -3],
    ["a", -1],
  ],
};

describe.each(engineBackends)("plain vector table on $name", (backend) => {
  let executor: SqlExecutor;
  let close: () => Promise<void>;
  const made: string[] = [];
  const table = (name = tableName()) => {
    made.push(name);
    return new PlainVectorTable(executor, name);
  };

  beforeAll(async () => {
    ({ executor, close } = await backend.open());
  });
  afterAll(async () => {
    for (const name of made) await executor.query(`DROP TABLE IF EXISTS "${name}"`);
    await close();
  });

  async function seeded() {
    const name = tableName();
    const t = table(name);
    const result = await t.upsert([
      record("a", [1, 0, 0], { kind: "x" }),
      record("b", [0, 3, 4]),
      record("c", [2, 2, 1], { kind: "y", n: 2 }),
    ]);
    expect(result).toEqual({ count: 3, dimension: 3, created: true });
    return { name, t };
  }

  it.each([
    ["cosine", VectorMetric.COSINE],
    ["euclidean", VectorMetric.EUCLIDEAN],
    ["dot", VectorMetric.DOT_PRODUCT],
  ] as const)("answers %s distances, nearest first", async (key, metric) => {
    const { t } = await seeded();
    const matches = await t.query({
      vector: query,
      topK: 10,
      metric: metricSql(metric),
      includeMetadata: false,
      includeValues: false,
    });
    expect(matches.map((match) => match.id)).toEqual(expected[key].map(([id]) => id));
    matches.forEach((match, i) => expect(match.score).toBeCloseTo(expected[key][i]![1], 5));
  });

  it("is a plain table a SQL client reads with pgvector's operators", async () => {
    const { name } = await seeded();
    const [column] = await executor.query<{ type: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = $1::regclass AND attname = 'embedding'`,
      [`"${name}"`],
    );
    expect(column?.type).toBe("vector(3)");
    const rows = await executor.query<{ id: string; d: number; kind: string | null }>(
      `SELECT id, embedding <-> '[1,1,0]' AS d, metadata->>'kind' AS kind FROM "${name}" ORDER BY 2`,
    );
    expect(rows.map((row) => [row.id, row.kind])).toEqual([
      ["a", "x"],
      ["c", "y"],
      ["b", null],
    ]);
  });

  it("returns metadata and values when asked, and limits to topK", async () => {
    const { t } = await seeded();
    const matches = await t.query({
      vector: query,
      topK: 2,
      metric: metricSql(VectorMetric.EUCLIDEAN),
      includeMetadata: true,
      includeValues: true,
    });
    expect(matches).toHaveLength(2);
    expect(matches[0]).toMatchObject({ id: "a", metadata: { kind: "x" }, values: [1, 0, 0] });
    expect(matches[1]).toMatchObject({ id: "c", metadata: { kind: "y", n: 2 }, values: [2, 2, 1] });
  });

  it("replaces a vector by id, values and metadata both", async () => {
    const { t } = await seeded();
    expect(await t.upsert([record("a", [0, 0, 9]), record("d", [1, 1, 0], { kind: "z" })])).toEqual({
      count: 2,
      dimension: 3,
      created: false,
    });
    const matches = await t.query({
      vector: [0, 0, 1],
      topK: 10,
      metric: metricSql(VectorMetric.COSINE),
      includeMetadata: true,
      includeValues: false,
    });
    expect(matches[0]).toEqual({ id: "a", score: 0 });
    expect((await t.describe()).count).toBe(4n);
  });

  it("refuses a length other than the table's, naming the vector, and writes nothing of the batch", async () => {
    const { t } = await seeded();
    expect(await errorOf(() => t.upsert([record("e", [1, 2, 3]), record("f", [1, 2])]))).toEqual([
      Code.InvalidArgument,
      expect.stringMatching(/^vectors\[1\]\.values has 2 dimensions; /),
    ]);
    const [code, message] = await errorOf(() => t.upsert([record("e", [1, 2, 3, 4])]));
    expect([code, message]).toEqual([
      Code.InvalidArgument,
      expect.stringContaining("vectors[0].values has 4 dimensions"),
    ]);
    expect(message).toContain("holds vectors of 3");
    expect((await t.describe()).count).toBe(3n);
    expect(
      await errorOf(() =>
        t.query({
          vector: [1, 2],
          topK: 1,
          metric: metricSql(VectorMetric.COSINE),
          includeMetadata: false,
          includeValues: false,
        }),
      ),
    ).toEqual([Code.InvalidArgument, expect.stringContaining("vector has 2 dimensions")]);
  });

  it("creates no table from a batch that disagrees with its first vector", async () => {
    const t = table();
    expect(await errorOf(() => t.upsert([record("a", [1, 2]), record("b", [1, 2, 3])]))).toEqual([
      Code.InvalidArgument,
      expect.stringContaining("vectors[1].values has 3 dimensions; vectors[0] has 2"),
    ]);
    expect(await errorOf(() => t.describe())).toEqual([Code.NotFound, expect.stringContaining("does not exist")]);
  });

  it("refuses a first vector no vector(n) can hold, creating nothing", async () => {
    const t = table();
    expect(await errorOf(() => t.upsert([record("a", [])]))).toEqual([
      Code.InvalidArgument,
      "vectors[0].values must hold at least one value",
    ]);
    expect(await errorOf(() => t.upsert([record("a", new Array<number>(16_001).fill(1))]))).toEqual([
      Code.InvalidArgument,
      "vectors[0].values has 16001 dimensions; at most 16000 are stored",
    ]);
    expect((await errorOf(() => t.describe()))[0]).toBe(Code.NotFound);
  });

  it("refuses repeated ids, non-finite values, an all-zero cosine query and a missing table", async () => {
    const { t } = await seeded();
    expect((await errorOf(() => t.upsert([record("x", [1, 1, 1]), record("x", [1, 1, 2])])))[1]).toContain(
      "vectors[1].id",
    );
    expect((await errorOf(() => t.upsert([record("x", [1, Number.NaN, 1])])))[1]).toContain("vectors[0].values[1]");
    expect((await errorOf(() => t.upsert([record("x", [1, 1e39, 1])])))[1]).toContain("vectors[0].values[1]");
    const zero = { vector: [0, 0, 0], topK: 1, includeMetadata: false, includeValues: false };
    expect(await errorOf(() => t.query({ ...zero, metric: metricSql(VectorMetric.COSINE) }))).toEqual([
      Code.InvalidArgument,
      expect.stringContaining("all zeros"),
    ]);
    expect(await t.query({ ...zero, metric: metricSql(VectorMetric.EUCLIDEAN) })).toHaveLength(1);
    expect((await errorOf(() => table().query({ ...zero, metric: metricSql(VectorMetric.EUCLIDEAN) })))[0]).toBe(
      Code.NotFound,
    );
  });

  it("deletes by ids or all, and a missing table deletes nothing", async () => {
    const { t } = await seeded();
    expect(await t.delete({ ids: ["a", "nope"] })).toBe(1);
    expect((await t.describe()).count).toBe(2n);
    expect(await t.delete({ all: true })).toBe(2);
    expect(await t.describe()).toMatchObject({ count: 0n, dimension: 3 });
    expect(await table().delete({ all: true })).toBe(0);
  });

  it("builds an HNSW index per metric with its operator class, which queries use", async () => {
    const { name, t } = await seeded();
    expect((await t.describe()).indexedMetrics).toEqual([]);
    await t.createIndex(metricSql(VectorMetric.DOT_PRODUCT));
    const info = await t.createIndex(metricSql(VectorMetric.COSINE));
    expect(info.indexedMetrics).toEqual([VectorMetric.COSINE, VectorMetric.DOT_PRODUCT]);
    // Again: nothing changes.
    expect((await t.createIndex(metricSql(VectorMetric.COSINE))).indexedMetrics).toHaveLength(2);
    const classes = await executor.query<{ opcname: string }>(
      `SELECT o.opcname FROM pg_index i JOIN pg_opclass o ON o.oid = i.indclass[0]
       WHERE i.indrelid = $1::regclass AND o.opcname LIKE 'vector_%' ORDER BY 1`,
      [`"${name}"`],
    );
    expect(classes.map((row) => row.opcname)).toEqual(["vector_cosine_ops", "vector_ip_ops"]);
    const plan = await executor.transaction(async (tx) => {
      await tx.query(`SET LOCAL enable_seqscan = off`);
      return tx.query<Record<string, string>>(
        `EXPLAIN SELECT id FROM "${name}" ORDER BY embedding <#> '[1,1,0]' LIMIT 2`,
      );
    });
    expect(JSON.stringify(plan)).toContain(`${name}__hnsw_ip`);
    const matches = await t.query({
      vector: query,
      topK: 3,
      metric: metricSql(VectorMetric.DOT_PRODUCT),
      includeMetadata: false,
      includeValues: false,
    });
    expect(matches.map((match) => match.id)).toEqual(["c", "b", "a"]);
  });

  it("uses a compatible table a SQL client made, and refuses one of another shape", async () => {
    const own = tableName();
    made.push(own);
    await executor.query(`CREATE TABLE "${own}" (id text PRIMARY KEY, embedding vector(2), metadata jsonb, note text)`);
    const t = new PlainVectorTable(executor, own);
    expect(await t.upsert([record("p", [3, 4])])).toEqual({ count: 1, dimension: 2, created: false });

    const odd = tableName();
    made.push(odd);
    await executor.query(`CREATE TABLE "${odd}" (id integer PRIMARY KEY, embedding vector(2))`);
    expect(await errorOf(() => new PlainVectorTable(executor, odd).upsert([record("p", [3, 4])]))).toEqual([
      Code.FailedPrecondition,
      expect.stringContaining("is not a vector table"),
    ]);
    expect((await errorOf(() => new PlainVectorTable(executor, odd).describe()))[0]).toBe(Code.FailedPrecondition);
  });

  it("lets concurrent first upserts agree on one table", async () => {
    const name = tableName();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => table(name).upsert([record(`v${i}`, [i, 1, 1])])),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect((await table(name).describe()).count).toBe(4n);
  });

  it("answers NOT_FOUND when a SQL client drops the table", async () => {
    const { name, t } = await seeded();
    await executor.query(`DROP TABLE "${name}"`);
    expect((await errorOf(() => t.describe()))[0]).toBe(Code.NotFound);
  });
});

describe("table names", () => {
  const fakeExecutor = {} as SqlExecutor;
  it.each([
    ["", "table is required"],
    ["Docs", "must be 1-48 characters"],
    ["1docs", "must be 1-48 characters"],
    ["docs-1", "must be 1-48 characters"],
    ['d"; drop table x; --', "must be 1-48 characters"],
    ["a".repeat(49), "must be 1-48 characters"],
    ["vc_0123456789abcdef0123456789abcdef", "starting with vc_"],
    ["pg_class", "starting with pg_"],
    ["docs__terms", "holding __"],
  ])("refuses %j", (name, reason) => {
    let error: ConnectError | undefined;
    try {
      new PlainVectorTable(fakeExecutor, name);
    } catch (thrown) {
      error = ConnectError.from(thrown);
    }
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toMatch(/^table /);
    expect(error?.rawMessage).toContain(reason);
  });

  it("accepts lower-case identifiers of up to 48 characters", () => {
    for (const name of ["docs", "a", "embeddings_v2", `a${"b".repeat(47)}`])
      expect(() => new PlainVectorTable(fakeExecutor, name)).not.toThrow();
  });
});
