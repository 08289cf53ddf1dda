import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient } from "../../sdk/src/index.js";
import { runAdmin, s3ClientFor, startPlatformServer, type StartedServer } from "./platform-server.js";
import {
  callData,
  createBuckets,
  createOrganization,
  dataUrl,
  okData,
  s3ClientOf,
  type TestOrganization,
} from "./shared-server.js";

/**
 * The shipped action catalog on real objects, through the data listener's HTTP routes: every
 * action on the shared server, and `summarize` (which needs an LLM endpoint) on a server of its
 * own pointed at a stand-in model on loopback.
 */

type Line = Record<string, Record<string, unknown>>;

let org: TestOrganization;

beforeAll(async () => {
  org = await createOrganization("shipped-actions");
  await createBuckets(org, "files");
  const s3 = await s3ClientOf(org);
  try {
    const put = (Key: string, Body: string, ContentType?: string) =>
      s3.send(new PutObjectCommand({ Bucket: "files", Key, Body, ...(ContentType ? { ContentType } : {}) }));
    await put("letter.txt", "Write to ada@example.com or call +44 20 7946 0958 before 2026-01-31.", "text/plain");
    await put("scan", "%PDF-1.4\n%%EOF\n");
    await put("people.csv", "name,age,city\nAda,36,London\nAlan,41,\nGrace,85,Arlington\n", "text/csv");
    await put("kettle.txt", KETTLE, "text/plain");
    await put("kettle-faq.md", KETTLE_FAQ, "text/markdown");
    await put("tides.txt", TIDES, "text/plain");
  } finally {
    s3.destroy();
  }
});

const KETTLE =
  "The kettle carries a two year warranty covering the heating element. To claim the warranty, " +
  "send the kettle with its receipt; the heating element is replaced within ten days.";
const KETTLE_FAQ =
  "# Kettle questions\n\nIs the heating element of the kettle covered? Yes: the warranty of the kettle " +
  "covers the heating element for two years, and a replaced element within ten days.";
const TIDES = "Tide tables for the harbour: high water at dawn, low water at noon, fishing boats leave at six.";

/**
 * RunAction over HTTP on the server at `baseUrl`, its NDJSON read line by line as the lines
 * arrive; a status other than 200 gives the error body instead of lines.
 */
async function runAt(
  baseUrl: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; lines: Line[]; error: Record<string, unknown> }> {
  const response = await request(`${baseUrl}/actions/run`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.statusCode !== 200)
    return { status: response.statusCode, lines: [], error: (await response.body.json()) as Record<string, unknown> };
  const lines: Line[] = [];
  for await (const line of createInterface({ input: response.body, crlfDelay: Infinity }))
    if (line !== "") lines.push(JSON.parse(line) as Line);
  return { status: response.statusCode, lines, error: {} };
}

const run = (body: unknown) => runAt(dataUrl(), org.headers, body);

/** The run's manifest, and its sibling file's text when it has one. */
async function manifestOf(runId: string) {
  return okData(
    callData<{ manifest: Record<string, unknown>; siblingOutput?: unknown }>(org, "POST", "/actions/runs/get", {
      bucket: "files",
      runId,
      inlineSibling: true,
    }),
  );
}

const runIdOf = (lines: Line[]) => (lines[0]!["started"] as { runId: string }).runId;

const object = (key: string) => ({ pillar: "objects", objectSingle: { bucket: "files", key } });
const table = (tableName: string) => ({ pillar: "tables", tableSingle: { bucket: "files", tableName } });
const kinds = (lines: Line[]) => lines.map((line) => Object.keys(line)[0]);
/** The kinds of an async run's lines: started, progress values, completed. */
const streamed = (lines: Line[]) => [...new Set(kinds(lines))];

describe("the shipped actions", () => {
  it("are offered by what they take", async () => {
    const list = async (selection: unknown) =>
      (
        await okData(callData<{ actions: { actionId: string }[] }>(org, "POST", "/actions/list", { selection }))
      ).actions.map((action) => action.actionId);
    const text = await list(object("letter.txt"));
    expect(text).toEqual(expect.arrayContaining(["extract_text", "redact_pii"]));
    expect(text).not.toContain("import_table");
    // Neither a type nor an extension: its first bytes make it a PDF.
    expect(await list(object("scan"))).toContain("extract_text");
    const csv = await list(object("people.csv"));
    expect(csv).toContain("import_table");
    expect(csv).not.toContain("extract_text");
  });

  it("extract text (sync: started then completed) and redact it", async () => {
    const extracted = await run({ selection: object("letter.txt"), actionId: "extract_text" });
    expect(extracted.status).toBe(200);
    expect(kinds(extracted.lines)).toEqual(["started", "completed"]);
    expect(JSON.stringify(extracted.lines[1])).toContain("ada@example.com");
    const redacted = await run({ selection: object("letter.txt"), actionId: "redact_pii" });
    expect(kinds(redacted.lines)).toEqual(["started", "completed"]);
    const { runId } = redacted.lines[0]!["started"] as { runId: string };
    const got = await okData(
      callData<{ manifest: { outputInline: string; outputKind: string } }>(org, "POST", "/actions/runs/get", {
        bucket: "files",
        runId,
      }),
    );
    expect(got.manifest.outputKind).toBe("OUTPUT_KIND_TEXT");
    expect(got.manifest.outputInline).not.toContain("ada@example.com");
    expect(got.manifest.outputInline).toContain("2026-01-31");
  });

  it("import a CSV as a table, describe it and export it as a file", async () => {
    const imported = await run({
      selection: object("people.csv"),
      actionId: "import_table",
      params: { table_name: "people" },
    });
    expect(kinds(imported.lines)).toEqual(["started", "completed"]);
    expect(imported.lines[1]!["completed"]!["output"]).toMatchObject({ row_count: 3 });
    const { runId } = imported.lines[0]!["started"] as { runId: string };
    const manifest = await okData(
      callData<{ manifest: Record<string, unknown> }>(org, "POST", "/actions/runs/get", { bucket: "files", runId }),
    );
    expect(manifest.manifest["warehouseRows"]).toEqual({ bucket: "files", tableName: "people", rowCount: "3" });

    const described = await run({ selection: table("people"), actionId: "describe_table" });
    expect(kinds(described.lines)).toEqual(["started", "completed"]);
    expect(JSON.stringify(described.lines[1])).toContain("city");

    const exported = await run({ selection: table("people"), actionId: "export_table_csv" });
    expect(kinds(exported.lines)).toEqual(["started", "completed"]);
    const exportRun = (exported.lines[0]!["started"] as { runId: string }).runId;
    const file = await okData(
      callData<{ manifest: { siblingFile: { key: string } }; siblingOutput: string }>(
        org,
        "POST",
        "/actions/runs/get",
        {
          bucket: "files",
          runId: exportRun,
          inlineSibling: true,
        },
      ),
    );
    expect(file.manifest.siblingFile.key).toMatch(/^_actions\/runs\/\d{13}_[0-9a-f-]{36}\/output\.csv$/);
    expect(file.siblingOutput).toContain("Grace");
  });

  it("combine several objects' texts into one Markdown document", async () => {
    const combined = await run({
      selection: { pillar: "objects", objectsMulti: { bucket: "files", keys: ["kettle.txt", "letter.txt"] } },
      actionId: "combine_texts",
      params: { title: "Bundle" },
    });
    expect(kinds(combined.lines)).toEqual(["started", "completed"]);
    expect(combined.lines[1]!["completed"]!["output"]).toMatchObject({ documents: 2 });
    const markdown = (combined.lines[1]!["completed"]!["output"] as { markdown: string }).markdown;
    expect(markdown.startsWith("# Bundle\n\n## kettle.txt\n\n")).toBe(true);
    expect(markdown).toContain("## letter.txt\n\nWrite to ada@example.com");
    expect(markdown.indexOf("two year warranty")).toBeLessThan(markdown.indexOf("ada@example.com"));
    const got = await manifestOf(runIdOf(combined.lines));
    expect(got.manifest).toMatchObject({ outputKind: "OUTPUT_KIND_MARKDOWN", outputInline: markdown });
  });

  describe("over a text collection", () => {
    let embeddedIds: string[] = [];

    beforeAll(async () => {
      await okData(
        callData(org, "POST", "/files/pipelines/vector", { name: "notes", templateId: "text_embedding_index" }),
      );
    });

    it("embed objects into it (async: progress per batch), then a search finds their chunks", async () => {
      const embedded = await run({
        selection: object("kettle.txt"),
        actionId: "embed_into_collection",
        params: { collection: "notes", chunk_size: 200, chunk_overlap: 0, batch_size: 1 },
      });
      expect(embedded.status).toBe(200);
      expect(streamed(embedded.lines)).toEqual(["started", "progress", "completed"]);
      const progress = embedded.lines.filter((line) => "progress" in line).map((line) => line["progress"]!["value"]);
      const total = (embedded.lines.at(-1)!["completed"]!["output"] as { chunk_total: number }).chunk_total;
      expect(total).toBeGreaterThan(0);
      expect(progress).toHaveLength(total);
      expect(progress).toContainEqual({ embedded: total, total });
      const { manifest } = await manifestOf(runIdOf(embedded.lines));
      expect(manifest["outputKind"]).toBe("OUTPUT_KIND_CHUNKS");
      const chunks = manifest["vectorChunks"] as {
        bucket: string;
        collection: string;
        chunkIds: string[];
        chunkCount: string;
      };
      expect(chunks).toMatchObject({ bucket: "files", collection: "notes", chunkCount: String(total) });
      expect(chunks.chunkIds).toHaveLength(total);
      embeddedIds = chunks.chunkIds;

      for (const key of ["kettle-faq.md", "tides.txt"]) {
        const other = await run({
          selection: object(key),
          actionId: "embed_into_collection",
          params: { collection: "notes" },
        });
        expect(kinds(other.lines).at(-1)).toBe("completed");
      }

      const found = await okData(
        callData<{
          results: { object: { key: string }; content?: string; chunkId?: string; metadata: Record<string, string> }[];
        }>(org, "POST", "/files/vector/search", {
          collectionName: "notes",
          text: "warranty of the heating element",
          topK: 10,
          includeContent: true,
        }),
      );
      const kettle = found.results.filter((result) => result.object.key === "kettle.txt");
      expect(kettle.length).toBeGreaterThan(0);
      expect(KETTLE).toContain(kettle[0]!.content);
      expect(kettle[0]!.metadata).toMatchObject({ source_key: "kettle.txt" });
      expect(embeddedIds).toContain(kettle[0]!.chunkId);
    });

    it("find the objects similar to one, without it", async () => {
      const similar = await run({
        selection: object("kettle.txt"),
        actionId: "find_similar_objects",
        params: { collection: "notes" },
      });
      expect(kinds(similar.lines)).toEqual(["started", "completed"]);
      const { objects } = similar.lines[1]!["completed"]!["output"] as { objects: { key: string; snippet: string }[] };
      const keys = objects.map((found) => found.key);
      expect(keys).not.toContain("kettle.txt");
      expect(keys[0]).toBe("kettle-faq.md");
      expect(objects[0]!.snippet).toContain("Kettle questions");
    });

    it("export chosen chunks as a JSON file", async () => {
      const chunkIds = embeddedIds.slice(0, 2);
      const exported = await run({
        selection: { pillar: "vectors", chunksMulti: { bucket: "files", collection: "notes", chunkIds } },
        actionId: "export_chunks_json",
      });
      expect(kinds(exported.lines)).toEqual(["started", "completed"]);
      const file = await manifestOf(runIdOf(exported.lines));
      expect(file.manifest["outputKind"]).toBe("OUTPUT_KIND_FILE");
      expect(file.manifest["siblingFile"]).toMatchObject({
        key: expect.stringMatching(/\/output\.json$/),
        contentType: "application/json",
      });
      // A JSON file comes back parsed.
      const chunks = file.siblingOutput as {
        id: string;
        content: string;
        metadata: Record<string, unknown>;
      }[];
      expect(chunks.map((chunk) => chunk.id)).toEqual(chunkIds);
      expect(chunks.every((chunk) => KETTLE.includes(chunk.content))).toBe(true);
      expect(chunks[0]!.metadata).toMatchObject({ source_key: "kettle.txt" });
    });
  });

  it("refuse to summarize without an LLM endpoint, before any stream or queued run", async () => {
    const refused = await run({ selection: object("letter.txt"), actionId: "summarize" });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ code: "failed_precondition" });
    expect(String(refused.error["message"])).toContain("LLM");
    const enqueued = await callData(org, "POST", "/actions/enqueue", {
      selection: object("letter.txt"),
      actionId: "summarize",
    });
    expect(enqueued.status).toBe(400);
    expect(enqueued.body).toMatchObject({ code: "failed_precondition" });
    const { runs } = await okData(
      callData<{ runs?: { actionId: string }[] }>(org, "POST", "/actions/runs/list", { bucket: "files" }),
    );
    expect((runs ?? []).map((listed) => listed.actionId)).not.toContain("summarize");
  });
});

describe("summarize, with an LLM endpoint", () => {
  let server: StartedServer | undefined;
  let model: Server | undefined;
  let headers: Record<string, string> = {};
  /** The prompts the stand-in model received. */
  const prompts: string[] = [];
  // Three parts of at least 2,000 characters (the smallest part_size), each with a word to find.
  const REPORT = ["alpha", "bravo", "charlie"]
    .map((word) => `Section ${word}. ` + `The ${word} plant ran at full capacity all quarter. `.repeat(40))
    .join("\n\n");

  beforeAll(async () => {
    // An OpenAI-compatible chat endpoint on loopback: notes name the part they read, the combining
    // call answers with a summary naming the notes it was given.
    model = createServer((incoming, response) => {
      let body = "";
      incoming.on("data", (chunk: Buffer) => (body += chunk.toString()));
      incoming.on("end", () => {
        const prompt = (JSON.parse(body) as { messages: { content: string }[] }).messages.at(-1)!.content;
        prompts.push(prompt);
        const content = prompt.includes("These are notes")
          ? `Summary of ${(prompt.match(/notes on part \d+/g) ?? []).length} notes: the plants ran at full capacity.`
          : `notes on part ${/part (\d+) of/.exec(prompt)?.[1] ?? "?"}`;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            model: "stand-in",
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => model!.listen(0, "127.0.0.1", resolve));
    const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    server = await startPlatformServer([
      "--llm-base-url",
      modelUrl,
      "--llm-model",
      "house-model",
      "--allow-private-network=true",
    ]);
    const created = await runAdmin(server.dataDir, ["create-org", "summaries"]);
    const { apiKey, organization } = created.json as { apiKey: string; organization: { id: string; name: string } };
    headers = { authorization: `Bearer ${apiKey}`, "x-organization-name": organization.name };
    const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: organization.name });
    const s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
    try {
      await s3.send(new CreateBucketCommand({ Bucket: "reports" }));
      await s3.send(
        new PutObjectCommand({ Bucket: "reports", Key: "q3.txt", Body: REPORT, ContentType: "text/plain" }),
      );
    } finally {
      s3.destroy();
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => model?.close(resolve));
  });

  it("summarizes part by part (async: a progress line per part), then the notes together", async () => {
    const summarized = await runAt(server!.urls.data!, headers, {
      selection: { pillar: "objects", objectSingle: { bucket: "reports", key: "q3.txt" } },
      actionId: "summarize",
      params: { part_size: 2000, max_words: 50 },
    });
    expect(summarized.status).toBe(200);
    expect(streamed(summarized.lines)).toEqual(["started", "progress", "completed"]);
    const progress = summarized.lines.filter((line) => "progress" in line).map((line) => line["progress"]!["value"]);
    const output = summarized.lines.at(-1)!["completed"]!["output"] as {
      summary: string;
      parts: number;
      model: string;
    };
    expect(output.parts).toBeGreaterThanOrEqual(3);
    expect(progress).toHaveLength(output.parts);
    expect(progress).toContainEqual({ part: output.parts, parts: output.parts });
    expect(output).toMatchObject({
      summary: `Summary of ${output.parts} notes: the plants ran at full capacity.`,
      model: "stand-in",
    });
    // Each part's prompt carried its own text; the last call combined the notes.
    expect(prompts.some((prompt) => prompt.includes("Section bravo"))).toBe(true);
    expect(prompts.at(-1)).toContain("These are notes");
    expect(prompts).toHaveLength(output.parts + 1);
  });
});
