import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EmbedderRegistry } from "./embedder-registry.js";
import { readEmbeddingsConfig } from "./embeddings-config.js";
import { LEXICAL_HASH_MODEL_ID } from "./lexical-hash-embedder.js";

interface Seen {
  path: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[]; query?: string; texts?: string[] };
}

/** A loopback fake speaking the OpenAI, Ollama-native and TEI shapes, chosen per test. */
let server: Server;
let root = "";
let seen: Seen[] = [];
let reply: (seen: Seen) => { status: number; body: unknown } = () => ({ status: 500, body: {} });

async function readBody(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += String(chunk);
  return text;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const entry: Seen = {
        path: request.url ?? "",
        authorization: request.headers.authorization,
        body: JSON.parse(text) as Seen["body"],
      };
      seen.push(entry);
      const { status, body } = reply(entry);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
});

const vectorOf = (text: string, dims: number) => Array.from({ length: dims }, (_, i) => (text.length + i) / 100);

function registry(extra: Record<string, string> = {}, allowPrivateNetwork = true) {
  const config = readEmbeddingsConfig({
    PLATFORM_EMBEDDINGS_URL: `${root}/v1`,
    PLATFORM_EMBEDDINGS_MODELS: "nomic-embed-text-v1.5=nomic-embed-text,code-model",
    PLATFORM_EMBEDDINGS_API_KEY: "sk-test",
    PLATFORM_RERANK_URL: root,
    ...extra,
  });
  return new EmbedderRegistry({ config, allowPrivateNetwork, batchSize: 2, timeoutMs: 2_000 });
}

async function codeOf(promise: Promise<unknown>): Promise<[Code, string]> {
  try {
    await promise;
  } catch (error) {
    const connect = ConnectError.from(error);
    return [connect.code, connect.rawMessage];
  }
  throw new Error("expected a failure");
}

describe("embedder registry and the OpenAI-compatible client", () => {
  it("resolves a served model to the endpoint, anything else to the local embedder", () => {
    const r = registry();
    expect(r.resolve("nomic-embed-text-v1.5", 4).modelId).toBe("nomic-embed-text-v1.5");
    const local = r.resolve("some-other-model", 768);
    expect(local).toMatchObject({ modelId: LEXICAL_HASH_MODEL_ID, local: true });
    expect(local.embedder.dimensions).toBe(768);
    const none = new EmbedderRegistry({ config: readEmbeddingsConfig({}) });
    expect(none.resolveModelId("nomic-embed-text-v1.5")).toBe(LEXICAL_HASH_MODEL_ID);
    expect(none.resolveModelId("code-model", "code")).toBe(LEXICAL_HASH_MODEL_ID);
  });

  it("refuses image modalities without an endpoint, and a recorded model no endpoint serves", () => {
    const none = new EmbedderRegistry({ config: readEmbeddingsConfig({}) });
    for (const modality of ["visual", "object", "face"]) {
      try {
        none.resolve("clip-vit", 1024, modality);
        expect.unreachable();
      } catch (error) {
        expect(ConnectError.from(error).code).toBe(Code.FailedPrecondition);
        expect(ConnectError.from(error).rawMessage).toContain(`no local ${modality} model`);
      }
    }
    expect(() => none.forModel("nomic-embed-text-v1.5", 768)).toThrow(
      'no embeddings endpoint serves model "nomic-embed-text-v1.5"',
    );
    // With an endpoint serving the model, an image modality resolves to it.
    expect(registry().resolve("code-model", 1024, "visual")).toMatchObject({ modelId: "code-model", local: false });
  });

  it("posts batches in OpenAI's shape with the key, the endpoint's model name and the task prefix, in input order", async () => {
    reply = ({ body }) => ({
      status: 200,
      // Out of order on purpose: the client must place each embedding by its index.
      body: { data: (body.input ?? []).map((text, index) => ({ index, embedding: vectorOf(text, 4) })).reverse() },
    });
    const embedder = registry().resolve("nomic-embed-text-v1.5", 4).embedder;
    const vectors = await embedder.embed(["a", "bb", "ccc"], "query");
    expect(seen.map((s) => s.body.input)).toEqual([["search_query: a", "search_query: bb"], ["search_query: ccc"]]);
    expect(seen[0]).toMatchObject({ path: "/v1/embeddings", authorization: "Bearer sk-test" });
    expect(seen[0]?.body.model).toBe("nomic-embed-text");
    expect(vectors.map((v) => v[0])).toEqual([Math.fround(15 / 100), Math.fround(16 / 100), Math.fround(17 / 100)]);
    await embedder.embed(["x"], "document");
    expect(seen.at(-1)?.body.input).toEqual(["search_document: x"]);
  });

  it("reads Ollama's and TEI's native answers", async () => {
    const embedder = registry().resolve("code-model", 3).embedder;
    reply = ({ body }) => ({ status: 200, body: { embeddings: (body.input ?? []).map((t) => vectorOf(t, 3)) } });
    expect(await embedder.embed(["a"], "document")).toHaveLength(1);
    reply = ({ body }) => ({ status: 200, body: (body.input ?? []).map((t) => vectorOf(t, 3)) });
    expect(await embedder.embed(["a", "b"], "document")).toHaveLength(2);
    expect(seen[0]?.body.input).toEqual(["a"]);
  });

  it("maps failures to codes with clear messages and no key", async () => {
    const embedder = registry().resolve("code-model", 3).embedder;
    const cases: Array<[number, unknown, Code, string]> = [
      [401, { error: { message: "bad key" } }, Code.FailedPrecondition, "answered 401: bad key"],
      [404, { error: "model not found" }, Code.FailedPrecondition, "answered 404: model not found"],
      [413, { error: "batch too large" }, Code.InvalidArgument, "answered 413"],
      [429, "slow down", Code.Unavailable, "answered 429"],
      [503, {}, Code.Unavailable, "answered 503"],
      [200, { data: [{ index: 0, embedding: [1, 2] }] }, Code.FailedPrecondition, "vectors of 2 dimensions"],
      [200, { data: [] }, Code.Unavailable, "returned 0 embeddings for 1 texts"],
      [200, { nothing: true }, Code.Unavailable, "without embeddings"],
    ];
    for (const [status, body, code, text] of cases) {
      reply = () => ({ status, body });
      const [got, message] = await codeOf(embedder.embed(["a"], "document"));
      expect([got, message.includes(text)], `${status} ${JSON.stringify(body)}: ${message}`).toEqual([code, true]);
      expect(message).not.toContain("sk-test");
    }
  });

  it("is unavailable when the endpoint does not answer in time or is down", async () => {
    const slow = createServer(() => {});
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const port = (slow.address() as AddressInfo).port;
    const config = readEmbeddingsConfig({
      PLATFORM_EMBEDDINGS_URL: `http://127.0.0.1:${port}`,
      PLATFORM_EMBEDDINGS_MODELS: "m",
    });
    const embedder = new EmbedderRegistry({ config, allowPrivateNetwork: true, timeoutMs: 200 }).forModel("m", 3);
    expect(await codeOf(embedder.embed(["a"], "document"))).toEqual([
      Code.Unavailable,
      expect.stringContaining("did not answer within 200 ms"),
    ]);
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
    expect(await codeOf(embedder.embed(["a"], "document"))).toEqual([
      Code.Unavailable,
      expect.stringContaining("is unreachable"),
    ]);
  });

  it("stops reading an answer that passes 64 MiB without declaring its length", async () => {
    let sent = 0;
    const endless = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024 * 1024, 32);
      const more = () => {
        while (!response.destroyed && sent < 1024 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", more);
        }
      };
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    const config = readEmbeddingsConfig({
      PLATFORM_EMBEDDINGS_URL: `http://127.0.0.1:${(endless.address() as AddressInfo).port}`,
      PLATFORM_EMBEDDINGS_MODELS: "m",
    });
    const embedder = new EmbedderRegistry({ config, allowPrivateNetwork: true }).forModel("m", 3);
    expect(await codeOf(embedder.embed(["a"], "document"))).toEqual([
      Code.Unavailable,
      expect.stringContaining("answered more than 64 MiB"),
    ]);
    // The read stopped near the limit instead of taking the gigabyte on offer.
    expect(sent).toBeLessThan(256 * 1024 * 1024);
    endless.closeAllConnections();
    await new Promise<void>((resolve) => endless.close(() => resolve()));
  });

  it("goes through the outbound-address guard unless private networks are allowed", async () => {
    const embedder = registry({}, false).resolve("code-model", 3).embedder;
    const [code, message] = await codeOf(embedder.embed(["a"], "document"));
    expect(code).toBe(Code.FailedPrecondition);
    expect(message).toContain("a loopback address");
    expect(seen).toHaveLength(0);
  });

  it("reranks through a TEI-shaped /rerank, scores in input order", async () => {
    reply = ({ body }) => ({
      status: 200,
      body: (body.texts ?? []).map((text, index) => ({ index, score: text.length })).sort((a, b) => b.score - a.score),
    });
    const reranker = registry().reranker();
    expect(await reranker?.rerank("q", ["a", "ccc", "bb"])).toEqual([1, 3, 2]);
    expect(seen[0]).toMatchObject({ path: "/rerank", body: { query: "q", texts: ["a", "ccc", "bb"] } });
    expect(new EmbedderRegistry({ config: readEmbeddingsConfig({}) }).reranker()).toBeUndefined();
    reply = () => ({ status: 200, body: [{ index: 0, score: 1 }] });
    expect((await codeOf(reranker!.rerank("q", ["a", "b"])))[0]).toBe(Code.Unavailable);
  });
});
