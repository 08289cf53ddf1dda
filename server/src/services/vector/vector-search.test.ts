import { randomBytes } from "node:crypto";
import { once } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FilterOp, LogicalOp, SearchMode } from "../../../../gen/platform/data/vector/v1/search_pb.js";
import {
  ConfigureEngineRequestSchema,
  SearchRequestSchema,
  SearchResponseSchema,
} from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import { registerVectorService } from "../../../../gen/platform/data/vector/v1/vector_service_server.js";
import { principalKey } from "../../auth/principal.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { EmbedderRegistry } from "../../embeddings/embedder-registry.js";
import { readEmbeddingsConfig } from "../../embeddings/embeddings-config.js";
import { LEXICAL_HASH_MODEL_ID } from "../../embeddings/lexical-hash-embedder.js";
import type { VectorCollectionInfo } from "./collection-directory.js";
import { createVectorService, type VectorServiceHandle } from "./vector-service.js";
import { connectErrorOf, openVectorFixture, type VectorFixture } from "./vector-test-fixture.js";

const DIMS = 64;
const TOPICS = {
  fruit: ["apple", "banana", "cherry", "mango", "orchard", "juicy", "ripe"],
  animal: ["zebra", "lion", "giraffe", "savanna", "herd", "predator", "tiger"],
  city: ["harbor", "subway", "skyline", "traffic", "district", "avenue", "tower"],
} as const;
type Topic = keyof typeof TOPICS;

let fixture: VectorFixture;
let orgId: string;
const bucket = "library";
const collections: Record<string, VectorCollectionInfo> = {};
const embedder = new EmbedderRegistry({ config: readEmbeddingsConfig({}) }).forModel(LEXICAL_HASH_MODEL_ID, DIMS);

/** Deterministic text about one topic: the chunk's words cycle through the topic's vocabulary. */
function chunkText(topic: Topic, seed: number): string {
  const words = TOPICS[topic];
  return Array.from({ length: 12 }, (_, i) => words[(seed * 3 + i * ((seed % 5) + 1)) % words.length]).join(" ");
}

/** Ingests `objects` objects of 3 chunks each through the engine core, as ingestion does. */
async function ingest(collection: VectorCollectionInfo, prefix: string, objects: number): Promise<void> {
  const physical = await fixture.service.collection(orgId, bucket, collection.physicalName, collection.dimensions);
  const topics = Object.keys(TOPICS) as Topic[];
  for (let o = 0; o < objects; o++) {
    const topic = topics[o % topics.length] as Topic;
    const texts = [0, 1, 2].map((c) => chunkText(topic, o * 3 + c));
    const vectors = await embedder.embed(texts, "document");
    const key = `${prefix}-${o}.txt`;
    await physical.upsertObject(
      key,
      texts.map((content, chunkIndex) => ({
        chunkIndex,
        content,
        embedding: vectors[chunkIndex] as Float32Array,
        partition: o % 10 === 0 ? "archive" : "",
        // Every seventh object lacks `year`: a filter on it must exclude them.
        metadata: {
          source_key: key,
          chunk_index: chunkIndex,
          category: topic,
          ...(o % 7 === 0 ? {} : { year: 2000 + (o % 25) }),
        },
      })),
    );
  }
}

beforeAll(async () => {
  fixture = await openVectorFixture();
  orgId = await fixture.database.createOrganization();
  const add = (info: Partial<VectorCollectionInfo> & { name: string }) =>
    (collections[info.name] = fixture.directory.add(orgId, bucket, { dimensions: DIMS, ...info }));
  add({ name: "docs" });
  add({ name: "notes", sparseMode: "bm25" });
  add({ name: "legacy", dimensions: 32 });
  add({ name: "photos", modality: "visual", embedModel: "clip-vit-b-32" });
  add({ name: "external", embedModel: "", sparseMode: "external" });
  add({ name: "empty" });
  // Recorded when an endpoint served its model, which it no longer does: never searched with a stand-in.
  add({ name: "templated", embedModel: "nomic-embed-text-v1.5" });
  // 100 objects x 3 chunks in docs, 40 x 3 in notes: a few hundred chunks in all.
  await ingest(collections.docs as VectorCollectionInfo, "doc", 100);
  await ingest(collections.notes as VectorCollectionInfo, "note", 40);
  await ingest(collections.templated as VectorCollectionInfo, "tpl", 6);
  const externalRows = await fixture.service.collection(orgId, bucket, collections.external!.physicalName, DIMS);
  const [vector] = await embedder.embed(["zebra lion herd"], "document");
  await externalRows.upsertObject("ext-0.bin", [
    { chunkIndex: 0, content: "", metadata: {}, embedding: vector as Float32Array },
  ]);
}, 120_000);
afterAll(() => fixture?.close());

type SearchInit = MessageInitShape<typeof SearchRequestSchema>;

async function search(init: SearchInit, service: VectorServiceHandle = fixture.service, org = orgId) {
  const request = create(SearchRequestSchema, { bucket, ...init });
  return create(SearchResponseSchema, await service.implementation.search(request, fixture.contextOf(org)));
}

const text = (value: string) => ({ case: "text" as const, value });
async function vectorOf(value: string): Promise<number[]> {
  return Array.from((await embedder.embed([value], "query"))[0] as Float32Array);
}

describe("text queries", () => {
  it("embed the text server-side and answer the nearest chunks, best first", async () => {
    const response = await search({ collectionName: "docs", query: text("zebra giraffe savanna") });
    expect(response.results).toHaveLength(10);
    expect(response.searchModeUsed).toBe("vector");
    expect(response.warnings).toEqual([]);
    expect(response.tookMs).toBeGreaterThanOrEqual(0n);
    expect(response.collectionStatuses).toEqual([
      expect.objectContaining({ collection: "docs", embeddingCompleted: true, searchCompleted: true, failReason: "" }),
    ]);
    const scores = response.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const result of response.results) {
      expect(result.metadata.category).toBe("animal");
      expect(result.object).toMatchObject({ bucket, key: expect.stringMatching(/^doc-\d+\.txt$/) });
      expect(result.chunkId).toBe(`${result.object?.key}#${result.chunkIndex}`);
      expect(result.source).toBe("VECTOR");
      expect(result.content).toBeUndefined();
      expect(result.highlight).toBeUndefined();
      expect(result.queryIndex).toBeUndefined();
    }
  });

  it("return content, highlights, output fields and topK as asked", async () => {
    const response = await search({
      collectionName: "docs",
      query: text("mango orchard"),
      topK: 3,
      includeContent: true,
      includeHighlights: true,
    });
    expect(response.results).toHaveLength(3);
    expect(response.results[0]?.content).toMatch(/mango|orchard/);
    expect(response.results[0]?.highlight).toMatch(/<em>(mango|orchard)<\/em>/);
    const many = await search({ collectionName: "docs", query: text("subway"), topK: 1000 });
    expect(many.results).toHaveLength(300);
    for (const topK of [-1, 1001]) {
      const error = await connectErrorOf(() => search({ collectionName: "docs", query: text("x"), topK }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/topK/);
    }
  });

  it("need an embed model: FAILED_PRECONDITION on a collection without one", async () => {
    const error = await connectErrorOf(() => search({ collectionName: "external", query: text("zebra") }));
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toMatch(/no embed_model.*vector query/);
    expect((await connectErrorOf(() => search({ collectionName: "docs", query: text("  ") }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await connectErrorOf(() => search({ collectionName: "docs" }))).rawMessage).toMatch(
      /exactly one of text, vector or s3_key/,
    );
  });
});

describe("metadata pre-filters and partitions", () => {
  it("keep only matching records; records lacking the field are excluded", async () => {
    const fruit = await search({
      collectionName: "docs",
      query: text("zebra"),
      topK: 1000,
      preFilter: { filters: [{ field: "category", op: FilterOp.EQ, value: "fruit" }] },
    });
    expect(fruit.results.length).toBe(34 * 3);
    expect(new Set(fruit.results.map((r) => r.metadata.category))).toEqual(new Set(["fruit"]));

    const recent = await search({
      collectionName: "docs",
      query: text("harbor"),
      topK: 1000,
      preFilter: {
        op: LogicalOp.AND,
        filters: [{ field: "year", op: FilterOp.GTE, value: "2020" }],
        groups: [{ op: LogicalOp.OR, filters: [{ field: "category", op: FilterOp.IN, value: "city,animal" }] }],
      },
    });
    expect(recent.results.length).toBeGreaterThan(0);
    for (const result of recent.results) {
      expect(Number(result.metadata.year)).toBeGreaterThanOrEqual(2020);
      expect(["city", "animal"]).toContain(result.metadata.category);
    }
    const withYear = await search({
      collectionName: "docs",
      query: text("harbor"),
      topK: 1000,
      preFilter: { filters: [{ field: "year", op: FilterOp.EXISTS }] },
    });
    // Objects 0, 7, ..., 98 (15 of 100) have no year.
    expect(withYear.results).toHaveLength((100 - 15) * 3);

    const bad = await connectErrorOf(() =>
      search({
        collectionName: "docs",
        query: text("x"),
        preFilter: { filters: [{ field: "year", op: FilterOp.UNSPECIFIED }] },
      }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toMatch(/preFilter\.filters\[0\]/);
  });

  it("restrict vector queries to partitions and output fields", async () => {
    const response = await search({
      collectionName: "docs",
      query: {
        case: "vector",
        value: {
          values: await vectorOf("apple"),
          partitionNames: ["archive"],
          outputFields: ["category"],
          searchParams: { ef: "80" },
        },
      },
      topK: 1000,
    });
    expect(response.results).toHaveLength(10 * 3);
    for (const result of response.results) expect(Object.keys(result.metadata)).toEqual(["category"]);
    const ef = await connectErrorOf(() =>
      search({
        collectionName: "docs",
        query: { case: "vector", value: { values: [1], searchParams: { ef: "many" } } },
      }),
    );
    expect(ef.rawMessage).toMatch(/searchParams\.ef/);
  });
});

describe("vector queries", () => {
  it("check the length against the collection's dimensions, naming the field", async () => {
    const error = await connectErrorOf(() =>
      search({ collectionName: "docs", query: { case: "vector", value: { values: [0.1, 0.2, 0.3] } } }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe('vector.values has 3 dimensions; collection "docs" has 64');
  });

  it("answer a batch with topK hits per query, tagged with queryIndex", async () => {
    const response = await search({
      collectionName: "docs",
      query: {
        case: "vector",
        value: { vectors: [{ values: await vectorOf("zebra lion") }, { values: await vectorOf("banana cherry") }] },
      },
      topK: 5,
    });
    expect(response.results.map((r) => r.queryIndex)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    expect(response.results.slice(0, 5).every((r) => r.metadata.category === "animal")).toBe(true);
    expect(response.results.slice(5).every((r) => r.metadata.category === "fruit")).toBe(true);
  });

  it("refuse sparse vectors off EXTERNAL collections, and with a batch", async () => {
    const values = await vectorOf("zebra");
    const sparse = [{ indices: [1, 5], values: [0.5, 0.2] }];
    const offExternal = await connectErrorOf(() =>
      search({ collectionName: "docs", query: { case: "vector", value: { values, sparseVectors: sparse } } }),
    );
    expect(offExternal.code).toBe(Code.InvalidArgument);
    expect(offExternal.rawMessage).toMatch(/sparse mode NONE.*EXTERNAL/);
    const batch = await connectErrorOf(() =>
      search({
        collectionName: "external",
        query: { case: "vector", value: { vectors: [{ values }, { values }], sparseVectors: sparse } },
      }),
    );
    expect(batch.code).toBe(Code.Unimplemented);
    const onExternal = await search({
      collectionName: "external",
      searchMode: SearchMode.HYBRID,
      query: { case: "vector", value: { values, sparseVectors: sparse } },
    });
    expect(onExternal.results.map((r) => r.object?.key)).toEqual(["ext-0.bin"]);
    expect(onExternal.warnings[0]).toMatch(/sparse/);
  });
});

describe("search modes", () => {
  it("follow the table: HYBRID on NONE falls back with a warning, BM25 collections fuse", async () => {
    const fallback = await search({ collectionName: "docs", query: text("zebra"), searchMode: SearchMode.HYBRID });
    expect(fallback.searchModeUsed).toBe("vector");
    expect(fallback.results).toHaveLength(10);
    expect(fallback.warnings).toEqual([expect.stringMatching(/"docs".*sparse mode NONE.*dense vectors only/)]);

    const auto = await search({ collectionName: "docs", query: text("zebra"), searchMode: SearchMode.AUTO });
    expect(auto).toMatchObject({ searchModeUsed: "vector", warnings: [] });

    for (const mode of [SearchMode.HYBRID, SearchMode.AUTO]) {
      const hybrid = await search({ collectionName: "notes", query: text("zebra herd"), searchMode: mode });
      expect(hybrid.searchModeUsed).toBe("hybrid");
      expect(hybrid.results.length).toBe(10);
      expect(hybrid.results.every((r) => r.source === "HYBRID" && r.metadata.category === "animal")).toBe(true);
    }
    const vectorOnBm25 = await search({ collectionName: "notes", query: text("zebra"), searchMode: SearchMode.VECTOR });
    expect(vectorOnBm25.searchModeUsed).toBe("vector");
  });
});

describe("fan-out", () => {
  it("searches the compatible collections together and reports the others", async () => {
    const response = await search({ query: text("giraffe predator"), topK: 50 });
    const statuses = Object.fromEntries(response.collectionStatuses.map((s) => [s.collection, s]));
    expect(Object.keys(statuses)).toEqual(["docs", "notes", "legacy", "photos", "external", "empty", "templated"]);
    for (const name of ["docs", "notes", "empty"])
      expect(statuses[name]).toMatchObject({ searchCompleted: true, failReason: "" });
    expect(statuses.legacy?.failReason).toMatch(/dimensions 32/);
    expect(statuses.photos?.failReason).toMatch(/embed model clip-vit-b-32/);
    expect(statuses.templated?.failReason).toMatch(/embed model nomic-embed-text-v1.5/);
    expect(statuses.external?.searchCompleted).toBe(false);
    const keys = response.results.map((r) => r.object?.key ?? "");
    expect(keys.some((key) => key.startsWith("doc-"))).toBe(true);
    expect(keys.some((key) => key.startsWith("note-"))).toBe(true);
    expect(keys.some((key) => key.startsWith("tpl-"))).toBe(false);
    const scores = response.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("searches a group in one mode, so fused and cosine scores are never ranked together", async () => {
    const response = await search({ query: text("zebra herd"), searchMode: SearchMode.HYBRID, topK: 20 });
    expect(response.searchModeUsed).toBe("vector");
    expect(response.results.every((r) => r.source === "VECTOR")).toBe(true);
    expect(response.warnings).toContainEqual(expect.stringMatching(/every collection searched together/));
    const keys = response.results.map((r) => r.object?.key ?? "");
    expect(keys.some((key) => key.startsWith("doc-")) && keys.some((key) => key.startsWith("note-"))).toBe(true);
  });

  it("never embeds a query with another model than the collection's vectors", async () => {
    const retired = await connectErrorOf(() => search({ collectionName: "templated", query: text("zebra") }));
    expect([retired.code, retired.rawMessage]).toEqual([
      Code.FailedPrecondition,
      expect.stringContaining('"nomic-embed-text-v1.5"'),
    ]);
  });

  it("answers nothing for a collection not yet materialized, and NOT_FOUND for an unknown one", async () => {
    expect((await search({ collectionName: "empty", query: text("zebra") })).results).toEqual([]);
    const unknown = await connectErrorOf(() => search({ collectionName: "nope", query: text("zebra") }));
    expect(unknown.code).toBe(Code.NotFound);
  });

  it("sees nothing of another organization's bucket", async () => {
    const stranger = await fixture.database.createOrganization();
    expect(
      (await connectErrorOf(() => search({ collectionName: "docs", query: text("zebra") }, fixture.service, stranger)))
        .code,
    ).toBe(Code.NotFound);
    expect((await search({ query: text("zebra") }, fixture.service, stranger)).results).toEqual([]);
  });
});

describe("s3Key queries and engines not ready", () => {
  it("are FAILED_PRECONDITION for text collections and without an image embedder", async () => {
    const onText = await connectErrorOf(() =>
      search({ collectionName: "docs", query: { case: "s3Key", value: "a.png" } }),
    );
    expect(onText.code).toBe(Code.FailedPrecondition);
    expect(onText.rawMessage).toMatch(/visual, face or object.*"docs" is a text collection/);
    const onImages = await connectErrorOf(() =>
      search({ collectionName: "photos", query: { case: "s3Key", value: "a.png" } }),
    );
    expect(onImages.code).toBe(Code.FailedPrecondition);
    expect(onImages.rawMessage).toMatch(/image embedder/);
  });

  it("embed the bucket's object as a data URL through the image collection's endpoint", async () => {
    const sent: string[] = [];
    // A fake embeddings endpoint answered in process: no request leaves it.
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      const body = JSON.parse(String(init.body)) as { input: string[] };
      sent.push(...body.input);
      const dimensions = collections.photos!.dimensions;
      const data = body.input.map((_, index) => ({ index, embedding: Array.from({ length: dimensions }, () => 0.5) }));
      return new Response(JSON.stringify({ data }), { status: 200, headers: { "content-type": "application/json" } });
    }) as unknown as typeof fetch;
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const imaging = createVectorService({
      db: fixture.database.db,
      box: createSecretBox(new Uint8Array(randomBytes(32))),
      databaseUrl: undefined,
      dataDir: "memory://",
      allowPrivateNetwork: true,
      embedders: new EmbedderRegistry({
        config: readEmbeddingsConfig({
          PLATFORM_EMBEDDINGS_URL: "http://127.0.0.1:9",
          PLATFORM_EMBEDDINGS_MODELS: "clip-vit-b-32",
        }),
        allowPrivateNetwork: true,
        fetch: fakeFetch,
      }),
      collections: fixture.directory,
      host: fixture.host,
      objects: {
        read: async (_org, _bucket, key) => (key === "cat.png" ? { bytes: png, contentType: "" } : undefined),
      },
    });
    const response = await search({ collectionName: "photos", query: { case: "s3Key", value: "cat.png" } }, imaging);
    expect(response.searchModeUsed).toBe("vector");
    expect(sent).toEqual([`data:image/png;base64,${Buffer.from(png).toString("base64")}`]);
    const missing = await connectErrorOf(() =>
      search({ collectionName: "photos", query: { case: "s3Key", value: "dog.png" } }, imaging),
    );
    expect([missing.code, missing.rawMessage]).toEqual([Code.NotFound, expect.stringContaining('"dog.png"')]);
  });

  it("answer no results for a bucket with no engine or one still provisioning", async () => {
    const other = await fixture.database.createOrganization();
    fixture.directory.add(other, "new", { name: "c" });
    const none = await search({ bucket: "new", collectionName: "c", query: text("zebra") }, fixture.service, other);
    expect(none.results).toEqual([]);
    await fixture.service.implementation.configureEngine(
      create(ConfigureEngineRequestSchema, { bucket: "new", mode: "auto" }),
      fixture.contextOf(other),
    );
    const pending = await search({ bucket: "new", collectionName: "c", query: text("zebra") }, fixture.service, other);
    expect(pending.results).toEqual([]);
    expect(pending.warnings).toEqual([expect.stringMatching(/PENDING/)]);
  });
});

describe("rerank", () => {
  it("is FAILED_PRECONDITION without a rerank endpoint", async () => {
    const error = await connectErrorOf(() => search({ collectionName: "docs", query: text("zebra"), rerank: true }));
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toMatch(/rerank endpoint/);
  });

  it("reorders the candidates by the cross-encoder's scores", async () => {
    const seen: string[] = [];
    // A fake TEI endpoint answered in process: no request leaves it.
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      const body = JSON.parse(String(init.body)) as { query: string; texts: string[] };
      seen.push(body.query);
      const scores = body.texts.map((t, index) => ({ index, score: t.split(" ").filter((w) => w === "tiger").length }));
      return new Response(JSON.stringify(scores), { status: 200, headers: { "content-type": "application/json" } });
    }) as unknown as typeof fetch;
    const reranking = createVectorService({
      db: fixture.database.db,
      box: createSecretBox(new Uint8Array(randomBytes(32))),
      databaseUrl: undefined,
      dataDir: "memory://",
      allowPrivateNetwork: true,
      embedders: new EmbedderRegistry({
        config: readEmbeddingsConfig({ PLATFORM_RERANK_URL: "http://127.0.0.1:9" }),
        allowPrivateNetwork: true,
        fetch: fakeFetch,
      }),
      collections: fixture.directory,
      host: fixture.host,
    });
    const response = await search(
      { collectionName: "docs", query: text("lion savanna"), rerank: true, topK: 5, includeContent: true },
      reranking,
    );
    expect(seen).toEqual(["lion savanna"]);
    const tigers = response.results.map((r) => (r.content ?? "").split(" ").filter((w) => w === "tiger").length);
    expect(response.results.map((r) => r.score)).toEqual(tigers);
    expect(tigers).toEqual([...tigers].sort((a, b) => b - a));
    const vectorQuery = await connectErrorOf(() =>
      search({ collectionName: "docs", query: { case: "vector", value: { values: [1] } }, rerank: true }, reranking),
    );
    expect(vectorQuery.rawMessage).toMatch(/rerank_text is required/);
  });
});

describe("over HTTP", () => {
  it("serves both search routes and the engine routes with camelCase JSON and mapped errors", async () => {
    const router = createServiceRouter({
      shutdownSignal: new AbortController().signal,
      // Stands in for the auth interceptor: every call is the test organization's.
      interceptors: [
        (next) => (request) => {
          request.contextValues.set(principalKey, { orgId, orgName: "test", keyId: "key", roles: new Set(["admin"]) });
          return next(request);
        },
      ],
    });
    registerVectorService(router, fixture.service.implementation);
    const server = http.createServer(router.nodeHandler());
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${origin}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    try {
      for (const path of [`/${bucket}/vector/search`, `/${bucket}/search/vector`]) {
        const { status, json } = await call("POST", path, {
          collectionName: "docs",
          text: "zebra",
          topK: 2,
          searchMode: "SEARCH_MODE_HYBRID",
        });
        expect(status, path).toBe(200);
        expect(json).toMatchObject({
          searchModeUsed: "vector",
          tookMs: expect.any(String),
          warnings: [expect.any(String)],
        });
        expect((json.results as unknown[]).length).toBe(2);
        expect((json.results as Array<Record<string, unknown>>)[0]).toMatchObject({
          object: { bucket, key: expect.any(String) },
          source: "VECTOR",
        });
      }
      const bad = await call("POST", `/${bucket}/vector/search`, {
        collectionName: "docs",
        vector: { values: [1, 2] },
      });
      expect(bad).toMatchObject({ status: 400, json: { code: "invalid_argument" } });
      const missing = await call("POST", `/${bucket}/vector/search`, { collectionName: "nope", text: "x" });
      expect(missing).toMatchObject({ status: 404, json: { code: "not_found" } });

      const engine = await call("GET", `/${bucket}/vector`);
      expect(engine.status).toBe(200);
      expect(engine.json).toMatchObject({ bucket, mode: "auto", status: "ACTIVE" });
      expect(Object.keys(engine.json)).not.toContain("vectordbPassword");
      const listed = engine.json.collections as Array<Record<string, unknown>>;
      expect(listed.find((c) => c.name === "docs")).toMatchObject({ materialized: true, dimensions: 64 });
      expect(listed.find((c) => c.name === "empty")).toMatchObject({ materialized: false });
      const instances = await call("GET", "/admin/vectordb-instances");
      expect(instances.json.instances).toEqual([
        expect.objectContaining({ serviceType: "database", status: "running" }),
      ]);
      const configured = await call("POST", "/other-bucket/vector", { mode: "auto" });
      expect(configured).toMatchObject({ status: 200, json: { bucket: "other-bucket", status: "PENDING" } });
      expect((await call("DELETE", "/other-bucket/vector", { deleteDatabase: true })).status).toBe(200);
      expect((await call("GET", "/other-bucket/vector")).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
