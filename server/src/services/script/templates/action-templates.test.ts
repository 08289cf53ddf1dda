import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { LEXICAL_HASH_MODEL_ID } from "../../../embeddings/lexical-hash-embedder.js";
import { compileContract } from "../dsl/contract.js";
import { parseScript } from "../dsl/parse-script.js";
import { runThread } from "../engine/interpreter.js";
import { Suspension } from "../engine/run-outcome.js";
import type { ThreadEventRecord } from "../threads/thread-events.js";
import { createThreadStore, type ThreadStore } from "../threads/thread-store.js";
import { createNativeToolSource } from "../tools/native-tools.js";
import { sendJson, startTestServer, type TestServer } from "../tools/test-kit.js";
import { createToolRegistry, type ToolRegistry } from "../tools/tool-registry.js";
import { SHIPPED_TEMPLATES_DIR } from "./template-catalog.js";

// Each action template run by the thread interpreter over a real store, with the inputs the
// actions service binds (server/actions/*.json) filled as it would fill them, and its output
// checked against what the action's output route reads.

let database: TestDatabase;
let store: ThreadStore;
let tools: ToolRegistry;
let llm: TestServer;
const OWNER = "action-templates-test";

beforeAll(async () => {
  database = await openTestDatabase();
  store = createThreadStore(database.db);
  // A stand-in OpenAI-compatible endpoint on loopback: answers each prompt with a line naming what it read.
  llm = await startTestServer((request, response) => {
    const messages = (JSON.parse(request.body) as { messages: { content: string }[] }).messages;
    const prompt = messages.at(-1)?.content ?? "";
    const content = prompt.includes("These are notes")
      ? "- Combined summary of the notes."
      : `- Notes of ${/part \d+ of \d+/.exec(prompt)?.[0] ?? "the whole document"}.`;
    sendJson(response, 200, {
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    });
  });
  tools = createToolRegistry([createNativeToolSource({ llm: { baseUrl: `${llm.url}/v1`, model: "test-model" } })]);
});
afterAll(async () => {
  await llm?.close();
  await database?.close();
});
beforeEach(() => {
  llm.requests.length = 0;
});

interface Run {
  readonly output: JsonObject;
  /** The values of the thread's `yielded` events, in order. */
  readonly yielded: JsonValue[];
}

/** Runs a shipped template to its end with `input` (defaults filled as CreateThread fills them). */
async function run(id: string, input: JsonObject): Promise<Run> {
  const source = readFileSync(join(SHIPPED_TEMPLATES_DIR, `${id}.yaml`), "utf8");
  const document = parseScript(source);
  const contract = compileContract(document);
  const orgId = await database.createOrganization();
  const now = Date.now();
  const thread = await store.insert({
    orgId,
    scriptName: `action.${id}`,
    scriptVersion: 1,
    status: "running",
    input: contract.validateInput(input),
    env: {},
    metadata: {},
    totalSteps: document.steps.length,
    leaseOwner: OWNER,
    leaseExpiresAt: now + 3_600_000,
    startedAt: now,
  });
  const events: ThreadEventRecord[] = [];
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const output = await runThread((await store.get(orgId, thread.id))!, document, {
        store,
        tools,
        artifacts: { write: async () => undefined as never },
        signal: new AbortController().signal,
        now: () => Date.now(),
        log: () => undefined,
        saveStep: async (step) => {
          if (!(await store.saveStep(step, OWNER))) throw new Error("lease lost");
        },
        beginStep: (step, event) => store.beginStep(OWNER, step, event),
        finishStep: (step, event) => store.finishStep(OWNER, step, event),
        emit: async (event) => {
          events.push(event);
          await store.appendEvent(orgId, thread.id, event);
        },
      });
      // What the thread would record as warnings: an output that does not fit the contract.
      expect(contract.validateOutput(output)).toEqual([]);
      const yielded = events
        .filter((event) => event.kind === "yielded")
        .map((event) => JSON.parse(Buffer.from(String(event.payload.valueData), "base64").toString()) as JsonValue);
      return { output: output as JsonObject, yielded };
    } catch (error) {
      // A retry's back-off suspends the thread; run it again as the worker would.
      if (!(error instanceof Suspension)) throw error;
    }
  }
  throw new Error(`${id} never ended`);
}

const DOCUMENT = [
  "# Shipping policy",
  "Orders ship within two business days. Express delivery is available in the EU and the UK.",
  "Questions? Write to support@shop.example.com or call +44 20 7946 0958 (Mon-Fri 09:00-17:00).",
  "Version 2.4.1 of this policy applies to orders from 2025-04-01; order ORD-2025-000123 costs $1,299.99.",
].join("\n\n");

describe("action_extract_text", () => {
  it("gives the bound text back, whole or cut to max_characters", async () => {
    const whole = await run("action_extract_text", {
      text: DOCUMENT,
      source_key: "docs/shipping.md",
      content_type: "text/markdown",
    });
    expect(whole.output).toEqual({
      text: DOCUMENT,
      characters: DOCUMENT.length,
      truncated: false,
      source_key: "docs/shipping.md",
      content_type: "text/markdown",
    });
    const cut = await run("action_extract_text", {
      text: DOCUMENT,
      source_key: "docs/shipping.md",
      max_characters: 17,
    });
    expect(cut.output).toMatchObject({ text: "# Shipping policy", characters: 17, truncated: true });
    expect(cut.yielded).toEqual([]);
  });
});

describe("action_redact_pii", () => {
  it("replaces the e-mail address and the phone number, and nothing else", async () => {
    const { output } = await run("action_redact_pii", { text: DOCUMENT, source_key: "docs/shipping.md" });
    expect(output.text).toBe(
      DOCUMENT.replace("support@shop.example.com", "[email]").replace("+44 20 7946 0958", "[phone]"),
    );
    expect(output).toMatchObject({ counts: { email: 1, phone: 1 }, total: 1 + 1, source_key: "docs/shipping.md" });
  });

  it("takes the kinds and the replacement of the form", async () => {
    const { output } = await run("action_redact_pii", {
      text: DOCUMENT,
      source_key: "docs/shipping.md",
      kinds: ["phone"],
      replacement: "███",
    });
    expect(output.text).toContain("support@shop.example.com or call ███ (Mon-Fri");
    expect(output.counts).toEqual({ email: 0, phone: 1 });
  });
});

describe("action_summarize", () => {
  it("summarizes a short text in one call, with the form's length, style and focus in the prompt", async () => {
    const { output, yielded } = await run("action_summarize", {
      text: DOCUMENT,
      source_key: "docs/shipping.md",
      max_words: 60,
      style: "bullets",
      focus: "delivery times",
    });
    expect(output).toEqual({
      summary: "- Notes of the whole document.",
      source_key: "docs/shipping.md",
      parts: 1,
      model: "test-model",
    });
    expect(yielded).toEqual([]);
    expect(llm.requests).toHaveLength(1);
    const prompt = (JSON.parse(llm.requests[0]!.body) as { messages: { content: string }[] }).messages[1]!.content;
    expect(prompt).toContain("Markdown bullet points of at most 60 words");
    expect(prompt).toContain("Concentrate on: delivery times.");
    expect(prompt).toContain(DOCUMENT);
  });

  it("summarizes a long text part by part with a progress value per part, then the notes together", async () => {
    const text = Array.from(
      { length: 12 },
      (_, i) => `Section ${i}. ${"The warehouse ships parcels daily. ".repeat(20)}`,
    ).join("\n\n");
    const { output, yielded } = await run("action_summarize", { text, source_key: "docs/long.md", part_size: 2000 });
    const parts = output.parts as number;
    expect(parts).toBeGreaterThan(3);
    expect(output.summary).toBe("- Combined summary of the notes.");
    expect(llm.requests).toHaveLength(parts + 1);
    expect(yielded).toHaveLength(parts);
    expect(yielded).toEqual(expect.arrayContaining(Array.from({ length: parts }, (_, i) => ({ part: i + 1, parts }))));
    const combine = (JSON.parse(llm.requests.at(-1)!.body) as { messages: { content: string }[] }).messages[1]!.content;
    expect(combine).toContain(`- Notes of part 1 of ${parts}.\n\n- Notes of part 2 of ${parts}.`);
  });

  it("fails on an object without text", async () => {
    await expect(run("action_summarize", { text: "", source_key: "docs/empty.md" })).rejects.toThrow(
      /docs\/empty.md has no text to summarize/,
    );
  });
});

// About 570 KB, in chunks of 200 characters some 3,000 chunks: batching them must stay linear to
// fit an expression's 30 ms and 100,000 cost units.
const LONG_TEXT = Array.from({ length: 15_000 }, (_, i) => `Line ${i} of the manual: keep it dry.`).join("\n");

describe("action_embed_into_collection", () => {
  it("gives 768-dimension chunks of a text collection, with a progress value per batch", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: orders ship within ${i} days.`).join("\n\n");
    const { output, yielded } = await run("action_embed_into_collection", {
      text,
      source_key: "docs/shipping.md",
      mime_type: "text/markdown",
      collection: "support_docs",
      chunk_size: 300,
      chunk_overlap: 0,
      batch_size: 2,
    });
    const vectors = output.vectors as { id: string; values: number[]; content: string; metadata: JsonObject }[];
    expect(output).toMatchObject({
      collection: "support_docs",
      embed_model: "nomic-embed-text-v1.5",
      dimensions: 768,
      embedded_with: LEXICAL_HASH_MODEL_ID,
      chunk_total: vectors.length,
    });
    expect(vectors.length).toBeGreaterThan(3);
    expect(vectors.map((vector) => vector.id)).toEqual(vectors.map((_, i) => `docs/shipping.md#${i}`));
    expect(vectors.every((vector) => vector.values.length === 768)).toBe(true);
    for (const { content, metadata } of vectors)
      expect(content).toBe(text.slice(metadata.start as number, metadata.end as number));
    expect(vectors[1]?.metadata).toMatchObject({
      source_key: "docs/shipping.md",
      chunk_index: 1,
      chunk_total: vectors.length,
      mime_type: "text/markdown",
      extracted_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(yielded).toHaveLength(Math.ceil(vectors.length / 2));
    expect(yielded).toContainEqual({ embedded: vectors.length, total: vectors.length });
  });

  // The index templates batch their chunks the same way.
  it.each([
    ["action_embed_into_collection", { collection: "manuals" }],
    ["text_embedding_index", {}],
    ["code_embedding_index", {}],
  ])(
    "%s batches thousands of chunks within the default expression limits",
    async (id, extra) => {
      const { output, yielded } = await run(id, {
        text: LONG_TEXT,
        source_key: "docs/manual.txt",
        chunk_size: 200,
        chunk_overlap: 0,
        ...extra,
      });
      const vectors = output.vectors as { id: string; values: number[]; metadata: JsonObject }[];
      expect(vectors.length).toBeGreaterThan(2_900);
      expect(output.chunk_total).toBe(vectors.length);
      expect(vectors.map((vector) => vector.metadata.chunk_index)).toEqual(vectors.map((_, i) => i));
      expect(vectors.every((vector) => vector.values.length === output.dimensions)).toBe(true);
      expect(yielded).toHaveLength(Math.ceil(vectors.length / 32));
      expect(yielded).toContainEqual({ embedded: vectors.length, total: vectors.length });
    },
    120_000,
  );

  it("document_chunking streams thousands of chunks in batches within the default expression limits", async () => {
    const { output, yielded } = await run("document_chunking", { text: LONG_TEXT, chunk_size: 200, chunk_overlap: 0 });
    const chunks = output.chunks as JsonObject[];
    expect(chunks.length).toBeGreaterThan(2_900);
    const batches = yielded as { chunks: JsonObject[]; done: number; total: number; percent: number }[];
    expect(batches).toHaveLength(Math.ceil(chunks.length / 25));
    expect(batches.flatMap((batch) => batch.chunks)).toEqual(chunks);
    expect(batches[0]).toMatchObject({
      done: 25,
      total: chunks.length,
      percent: Math.floor((25 * 100) / chunks.length),
    });
    expect(batches.at(-1)).toMatchObject({ done: chunks.length, percent: 100 });
  }, 120_000);
});

describe("action_import_table", () => {
  it("gives the parsed rows with the column types inferred from CSV text", async () => {
    const rows = [
      { order_id: "1001", customer: "Acme GmbH", total: "129.90", paid: "true", ordered_at: "2025-03-02T09:15:00Z" },
      { order_id: "1002", customer: "Globex, Ltd", total: "42", paid: "false", ordered_at: "" },
    ];
    const { output } = await run("action_import_table", {
      rows,
      source_key: "exports/orders.csv",
      table_name: "orders",
    });
    // Thread inputs and outputs are stored as JSON objects that keep no key order, so the columns
    // come in the stored order of the keys; the service knows the file's own order.
    expect(output).toMatchObject({ table_name: "orders", source_key: "exports/orders.csv", row_count: 2, rows });
    expect(new Map((output.columns as { name: string; type: string }[]).map(({ name, type }) => [name, type]))).toEqual(
      new Map([
        ["order_id", "integer"],
        ["customer", "string"],
        ["total", "number"],
        ["paid", "boolean"],
        ["ordered_at", "timestamp"],
      ]),
    );
  });

  it("refuses a table name that is not a column-style name, and an object without rows", async () => {
    await expect(
      run("action_import_table", { rows: [{ a: 1 }], source_key: "a.csv", table_name: "Orders 2025" }),
    ).rejects.toThrow(/input_json\/table_name: must match pattern/);
    await expect(run("action_import_table", { rows: [], source_key: "a.csv", table_name: "a" })).rejects.toThrow(
      /a.csv has no rows to import/,
    );
  });
});

const TABLE: JsonObject = {
  table: "orders",
  columns: [
    { name: "order_id", type: "integer" },
    { name: "customer", type: "string" },
    { name: "note", type: "string" },
  ],
  rows: [
    { order_id: 1001, customer: "Acme, GmbH", note: 'said "rush"' },
    { order_id: 1002, customer: "Globex Ltd", note: null },
    { order_id: 1003, customer: "Initech", note: "line one\nline two" },
    { order_id: 1004, customer: "Acme, GmbH" },
  ],
  row_count: 4,
};

describe("action_describe_table", () => {
  it("gives the columns with their types, null ratios and distinct counts", async () => {
    const { output } = await run("action_describe_table", TABLE);
    expect(output).toEqual({
      table: "orders",
      row_count: 4,
      rows_profiled: 4,
      columns: [
        {
          name: "order_id",
          type: "integer",
          null_count: 0,
          null_ratio: 0,
          distinct_count: 4,
          examples: [1001, 1002, 1003],
        },
        {
          name: "customer",
          type: "string",
          null_count: 0,
          null_ratio: 0,
          distinct_count: 3,
          examples: ["Acme, GmbH", "Globex Ltd", "Initech"],
        },
        {
          name: "note",
          type: "string",
          null_count: 2,
          null_ratio: 0.5,
          distinct_count: 2,
          examples: ['said "rush"', "line one\nline two"],
        },
      ],
    });
  });
});

describe("action_export_table_csv", () => {
  it("gives a CSV file of the rows in column order, quoted where needed", async () => {
    const { output } = await run("action_export_table_csv", { ...TABLE, row_count: 10 });
    expect(output).toEqual({
      content:
        "order_id,customer,note\r\n" +
        '1001,"Acme, GmbH","said ""rush"""\r\n' +
        "1002,Globex Ltd,\r\n" +
        '1003,Initech,"line one\nline two"\r\n' +
        '1004,"Acme, GmbH",\r\n',
      content_type: "text/csv",
      table: "orders",
      rows_written: 4,
      truncated: true,
    });
  });

  it("takes another delimiter and no header", async () => {
    const { output } = await run("action_export_table_csv", { ...TABLE, delimiter: ";", header: false });
    expect(output.content).toMatch(/^1001;Acme, GmbH;"said ""rush"""\r\n/);
    expect(output.truncated).toBe(false);
  });
});

describe("action_find_similar_objects", () => {
  it("ranks the objects of the hits by their best chunk, without the selected object", async () => {
    const hits: JsonObject[] = [
      { key: "docs/shipping.md", score: 0.99, content: "Orders ship within two business days." },
      { key: "docs/returns.md", score: 0.71, content: "Returns are accepted within 30 days." },
      { key: "docs/express.md", score: 0.88, content: "Express delivery: ".padEnd(400, "x") },
      { key: "docs/returns.md", score: 0.83, content: "Parcels are shipped back at our cost." },
      { key: "docs/faq.md", score: 0.4 },
    ];
    const { output } = await run("action_find_similar_objects", {
      hits,
      source_key: "docs/shipping.md",
      collection: "support_docs",
      top_k: 3,
    });
    expect(output).toEqual({
      source_key: "docs/shipping.md",
      collection: "support_docs",
      objects: [
        {
          key: "docs/express.md",
          score: 0.88,
          matching_chunks: 1,
          snippet: `${"Express delivery: ".padEnd(280, "x")}…`,
        },
        { key: "docs/returns.md", score: 0.83, matching_chunks: 2, snippet: "Parcels are shipped back at our cost." },
        { key: "docs/faq.md", score: 0.4, matching_chunks: 1, snippet: "" },
      ],
    });
  });
});

describe("action_combine_texts", () => {
  it("joins the selected texts into one Markdown document, a section per object in selection order", async () => {
    const { output } = await run("action_combine_texts", {
      documents: [
        { key: "docs/shipping.md", content_type: "text/markdown", text: "Orders ship within two days.\n" },
        { key: "docs/returns.pdf", content_type: "application/pdf", text: "  Returns within 30 days." },
      ],
      title: "Policies",
    });
    const markdown =
      "# Policies\n\n## docs/shipping.md\n\nOrders ship within two days.\n\n## docs/returns.pdf\n\nReturns within 30 days.\n";
    expect(output).toEqual({ markdown, documents: 2, characters: markdown.length });
  });
});

describe("action_export_chunks_json", () => {
  const chunks: JsonObject[] = [
    { id: "docs/a.md#0", content: 'Say "hi"', metadata: { source_key: "docs/a.md", chunk_index: 0 } },
    { id: "docs/b.md#3", content: "Line\nbreak", metadata: { source_key: "docs/b.md", chunk_index: 3 } },
  ];

  it("gives a JSON file of the chunks, with or without their metadata", async () => {
    const whole = await run("action_export_chunks_json", { collection: "support_docs", chunks });
    expect(whole.output).toMatchObject({
      content_type: "application/json",
      collection: "support_docs",
      chunk_count: 2,
    });
    expect(JSON.parse(whole.output.content as string)).toEqual(chunks);
    const bare = await run("action_export_chunks_json", {
      collection: "support_docs",
      chunks,
      include_metadata: false,
    });
    expect(JSON.parse(bare.output.content as string)).toEqual([
      { id: "docs/a.md#0", content: 'Say "hi"' },
      { id: "docs/b.md#3", content: "Line\nbreak" },
    ]);
  });
});
