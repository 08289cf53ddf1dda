import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { beforeEach, describe, expect, it } from "vitest";
import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import { ActionRunStatus, OutputKind } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import { SelectionSchema, type Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionDefinition } from "./action-definition.js";
import { fakePorts, testAction } from "./actions-test-fakes.js";
import { createActionRunner, type ActionRunnerParts } from "./create-action-runner.js";
import { decodeManifest } from "./run-manifests.js";
import { manifestKey, reverseTimestamp, RUNS_PREFIX } from "./run-keys.js";

const ORG = "org-a";
const OTHER = "org-b";
const BUCKET = "docs";

const TEXT_INPUTS: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: {
    text: { type: "string" },
    source_key: { type: "string" },
    uppercase: { type: "boolean", default: false, description: "Shout." },
    style: { type: "string", enum: ["short", "long"], default: "short" },
  },
};

const ACTIONS: ActionDefinition[] = [
  testAction({
    id: "echo_text",
    acceptedContentTypes: ["text/plain", "text/html", "text/markdown"],
    acceptedExtensions: [".txt", ".html", ".md"],
    bind: { text: "object.text", source_key: "object.key" },
    output: { kind: "TEXT", route: "inline", field: "text", extension: "txt" },
  }),
  testAction({
    id: "chunk_progress",
    invoke: "async",
    bind: { text: "object.text" },
    output: { kind: "JSON", route: "inline" },
  }),
  testAction({ id: "needs_llm", requires: ["llm"], bind: { text: "object.text" } }),
  testAction({
    id: "import_rows",
    acceptedExtensions: [".csv", ".jsonl"],
    bind: { rows: "object.rows" },
    output: { kind: "TABLE_ROWS", route: "table" },
  }),
  testAction({
    id: "export_rows",
    pillars: ["tables"],
    shapes: ["table_single"],
    bind: { rows: "table.rows", count: "table.row_count", columns: "table.columns" },
    output: { kind: "FILE", route: "file", extension: "csv" },
  }),
  testAction({
    id: "embed",
    bind: { text: "object.text", source_key: "object.key" },
    output: { kind: "CHUNKS", route: "chunks" },
  }),
  testAction({ id: "similar", bind: { hits: "similar.hits", source_key: "object.key" } }),
  testAction({
    id: "gather",
    shapes: ["objects_multi"],
    bind: { items: "objects.items", keys: "objects.keys" },
  }),
  testAction({
    id: "chunk_notes",
    pillars: ["vectors"],
    shapes: ["chunks_multi"],
    bind: { chunks: "chunks.items", collection_name: "collection.name" },
  }),
];

const open = (extra: JsonObject = {}): JsonObject => ({
  type: "object",
  properties: extra,
});

function objectSelection(key: string, contentType = "", bucket = BUCKET, pillar = "objects"): Selection {
  return create(SelectionSchema, { pillar, shape: { case: "objectSingle", value: { bucket, key, contentType } } });
}

async function collect(events: AsyncIterable<ActionEvent>): Promise<ActionEvent[]> {
  const all: ActionEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function refusal(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

describe("the action runner", () => {
  let fakes: ReturnType<typeof fakePorts>;
  let parts: ActionRunnerParts;
  let clock = 1_750_000_000_000;

  beforeEach(() => {
    fakes = fakePorts();
    fakes.objects.addBucket(ORG, BUCKET);
    fakes.objects.addBucket(OTHER, "private");
    fakes.objects.store(ORG, BUCKET, "notes.txt", "hello actions", "text/plain");
    fakes.objects.store(ORG, BUCKET, "page.html", "<html><body><p>Visible</p><script>x()</script></body></html>");
    fakes.objects.store(ORG, BUCKET, "paper.pdf", "%PDF-1.4", "application/pdf");
    fakes.objects.store(ORG, BUCKET, "people.csv", "name,age\nada,36\nalan,41\n", "text/csv");
    for (const action of ACTIONS)
      fakes.templates.templates.set(action.template, {
        id: action.template,
        description: `Template of ${action.id}.`,
        inputs: action.id === "echo_text" ? TEXT_INPUTS : open(),
        outputs: { type: "object", properties: { text: { type: "string", description: "The text." } } },
      });
    clock = 1_750_000_000_000;
    parts = createActionRunner({ ports: fakes.ports, actions: ACTIONS, now: () => clock++ });
  });

  describe("adapts a request", () => {
    it("refusing an unknown action, naming action_id", async () => {
      const error = await refusal(
        parts.runner.prepare(ORG, { actionId: "nope", selection: objectSelection("notes.txt") }),
      );
      expect(error.code).toBe(Code.NotFound);
      expect(error.rawMessage).toContain("action_id");
    });

    it("refusing a selection with no shape, and one without its bucket", async () => {
      const none = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: create(SelectionSchema) }),
      );
      expect(none.code).toBe(Code.InvalidArgument);
      const noBucket = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("notes.txt", "", "") }),
      );
      expect(noBucket.rawMessage).toContain("selection.object_single.bucket");
    });

    it("answering NOT_FOUND for another organization's bucket and a missing object", async () => {
      const foreign = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("x.txt", "", "private") }),
      );
      expect(foreign.code).toBe(Code.NotFound);
      const missing = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("gone.txt") }),
      );
      expect(missing.code).toBe(Code.NotFound);
    });

    it("refusing a shape or pillar the action does not take", async () => {
      const multi = create(SelectionSchema, {
        pillar: "objects",
        shape: { case: "objectsMulti", value: { bucket: BUCKET, keys: ["notes.txt"] } },
      });
      const shape = await refusal(parts.runner.prepare(ORG, { actionId: "echo_text", selection: multi }));
      expect(shape.code).toBe(Code.InvalidArgument);
      expect(shape.rawMessage).toContain("selection.objects_multi");
      const pillar = await refusal(
        parts.runner.prepare(ORG, {
          actionId: "echo_text",
          selection: objectSelection("notes.txt", "", BUCKET, "tables"),
        }),
      );
      expect(pillar.rawMessage).toContain("selection.pillar");
    });

    it("inspecting an omitted content type server-side and refusing one the action does not take", async () => {
      const error = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("paper.pdf") }),
      );
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toContain("selection.object_single.content_type");
      expect(error.rawMessage).toContain("application/pdf");
      // Neither a stored type nor an extension: the first bytes say it is a PDF.
      fakes.objects.store(ORG, BUCKET, "scan", "%PDF-1.7 ...", "");
      const sniffed = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("scan") }),
      );
      expect(sniffed.rawMessage).toContain("does not take application/pdf");
      // No stored type: the extension decides (.html is text/html, which the action takes).
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("page.html"),
      });
      expect(prepared.dispatch.bucket).toBe(BUCKET);
    });

    it("checking params against the template contract, naming params.<field>", async () => {
      const selection = objectSelection("notes.txt");
      const wrongType = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection, params: { uppercase: "yes" } }),
      );
      expect(wrongType.code).toBe(Code.InvalidArgument);
      expect(wrongType.rawMessage).toContain("params.uppercase");
      const unknown = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection, params: { colour: 1 } }),
      );
      expect(unknown.rawMessage).toContain("params.colour");
      const badEnum = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection, params: { style: "epic" } }),
      );
      expect(badEnum.rawMessage).toMatch(/params\.style: must be one of "short", "long"/);
      const bound = await refusal(
        parts.runner.prepare(ORG, { actionId: "echo_text", selection, params: { text: "x" } }),
      );
      expect(bound.rawMessage).toContain("params.text");
    });

    it("refusing an action whose capability the server lacks", async () => {
      const error = await refusal(
        parts.runner.prepare(ORG, { actionId: "needs_llm", selection: objectSelection("notes.txt") }),
      );
      expect(error.code).toBe(Code.FailedPrecondition);
      expect(error.rawMessage).toContain("LLM");
    });

    it("allocating a UUIDv7 run id whose time is the reverse timestamp's", async () => {
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const { runId, reverseTs } = prepared.dispatch;
      expect(runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(reverseTs).toBe(reverseTimestamp(parseInt(runId.replace(/-/g, "").slice(0, 12), 16)));
      expect(reverseTs).toHaveLength(13);
    });
  });

  describe("binds", () => {
    it("the object's extracted text and key", async () => {
      await collect(await run("echo_text", objectSelection("page.html")));
      expect(fakes.scripts.started[0]!.input).toEqual({ text: "Visible", source_key: "page.html" });
      expect(fakes.scripts.started[0]!.metadata).toMatchObject({ origin: "action", action_id: "echo_text" });
    });

    it("rows of a CSV object, a table's rows and count, objects and chunks", async () => {
      fakes.tables.tables.set(`${ORG}/${BUCKET}/people`, {
        columns: [{ name: "name", type: "string" }],
        mergeKeys: [],
        rows: [{ name: "ada" }, { name: "alan" }],
      });
      fakes.vectors.addCollection(ORG, BUCKET, "kb", [
        { id: "a#0", content: "first", metadata: { page: 1 }, sourceKey: "a" },
        { id: "a#1", content: "second", metadata: {}, sourceKey: "a" },
      ]);
      await collect(await run("import_rows", objectSelection("people.csv"), { table_name: "people_copy" }));
      expect(fakes.scripts.started[0]!.input["rows"]).toEqual([
        { name: "ada", age: "36" },
        { name: "alan", age: "41" },
      ]);
      const table = create(SelectionSchema, {
        pillar: "tables",
        shape: { case: "tableSingle", value: { bucket: BUCKET, tableName: "people" } },
      });
      await collect(await run("export_rows", table));
      expect(fakes.scripts.started[1]!.input).toEqual({
        rows: [{ name: "ada" }, { name: "alan" }],
        count: 2,
        columns: [{ name: "name", type: "string" }],
      });
      const multi = create(SelectionSchema, {
        pillar: "objects",
        shape: { case: "objectsMulti", value: { bucket: BUCKET, keys: ["notes.txt", "page.html"] } },
      });
      await collect(await run("gather", multi));
      expect(fakes.scripts.started[2]!.input).toEqual({
        keys: ["notes.txt", "page.html"],
        items: [
          { key: "notes.txt", content_type: "text/plain", text: "hello actions" },
          { key: "page.html", content_type: "text/html", text: "Visible" },
        ],
      });
      const chunks = create(SelectionSchema, {
        pillar: "vectors",
        shape: { case: "chunksMulti", value: { bucket: BUCKET, collection: "kb", chunkIds: ["a#1", "a#0", "gone"] } },
      });
      await collect(await run("chunk_notes", chunks));
      expect(fakes.scripts.started[3]!.input).toEqual({
        collection_name: "kb",
        chunks: [
          { id: "a#1", content: "second", metadata: {} },
          { id: "a#0", content: "first", metadata: { page: 1 } },
        ],
      });
    });

    it("similar hits of params.collection, top_k 10 unless given", async () => {
      const missing = await refusal(
        parts.runner.prepare(ORG, {
          actionId: "similar",
          selection: objectSelection("notes.txt"),
          params: { collection: "kb" },
        }),
      );
      expect(missing.code).toBe(Code.NotFound);
      fakes.vectors.addCollection(ORG, BUCKET, "kb");
      fakes.vectors.hits = [{ key: "other.txt", score: 0.9, content: "hello" }];
      await collect(await run("similar", objectSelection("notes.txt"), { collection: "kb" }));
      expect(fakes.vectors.searches[0]).toEqual({ text: "hello actions", topK: 10 });
      expect(fakes.scripts.started[0]!.input["hits"]).toEqual([{ key: "other.txt", score: 0.9, content: "hello" }]);
      const badTopK = await refusal(
        parts.runner.prepare(ORG, {
          actionId: "similar",
          selection: objectSelection("notes.txt"),
          params: { collection: "kb", top_k: 0 },
        }),
      );
      expect(badTopK.rawMessage).toContain("params.top_k");
    });
  });

  describe("executes", () => {
    it("a sync action: started then completed, a RUNNING manifest first and the terminal one after", async () => {
      let running: ReturnType<typeof decodeManifest> | undefined;
      fakes.scripts.onWatch = async () => {
        const keys = fakes.objects.keys(ORG, BUCKET).filter((key) => key.startsWith(RUNS_PREFIX));
        running = decodeManifest(Buffer.from(fakes.objects.text(ORG, BUCKET, keys[0]!)!));
      };
      fakes.scripts.behaviours.set("action_echo_text", (input) => ({
        reports: [{ kind: "yielded", stepPath: "0", stepName: "tick", value: 1 }],
        output: { text: String(input["text"]).toUpperCase() },
      }));
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const events = await collect(parts.runner.execute(prepared));
      expect(events.map((event) => event.event.case)).toEqual(["started", "completed"]);
      expect(events[0]!.event.value).toMatchObject({ actionId: "echo_text", threadId: "thread-1" });
      expect(events[1]!.event.case === "completed" && events[1]!.event.value.output).toEqual({ text: "HELLO ACTIONS" });
      expect(running?.status).toBe(ActionRunStatus.RUNNING);

      const key = manifestKey(prepared.dispatch.reverseTs, prepared.dispatch.runId);
      const stored = JSON.parse(fakes.objects.text(ORG, BUCKET, key)!) as JsonObject;
      // The proto JSON with every field written.
      expect(stored).toMatchObject({
        runId: prepared.dispatch.runId,
        actionId: "echo_text",
        bucket: BUCKET,
        batchId: "",
        threadId: "thread-1",
        status: "ACTION_RUN_STATUS_COMPLETED",
        outputKind: "OUTPUT_KIND_TEXT",
        outputInline: "HELLO ACTIONS",
        error: "",
        enqueuedAtMs: "0",
        promoted: [],
      });
    });

    it("an async action: each yielded value is a progress event, a non-object wrapped", async () => {
      fakes.scripts.behaviours.set("action_chunk_progress", () => ({
        reports: [
          { kind: "yielded", stepPath: "1", stepName: "split", value: { done: 1, total: 2 } },
          { kind: "yielded", stepPath: "1", stepName: "split", value: 2 },
        ],
        output: { chunks: 2 },
      }));
      const events = await collect(await run("chunk_progress", objectSelection("notes.txt")));
      expect(events.map((event) => event.event.case)).toEqual(["started", "progress", "progress", "completed"]);
      expect(events[1]!.event.value).toMatchObject({ stepPath: "1", stepName: "split", value: { done: 1, total: 2 } });
      expect(events[2]!.event.value).toMatchObject({ value: { value: 2 } });
    });

    it("a failing thread: a final failed event with its step, and a FAILED manifest", async () => {
      fakes.scripts.behaviours.set("action_echo_text", () => ({
        reports: [{ kind: "failed", error: "boom", failedStepPath: "2", failedStepName: "explode" }],
      }));
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const events = await collect(parts.runner.execute(prepared));
      expect(events.map((event) => event.event.case)).toEqual(["started", "failed"]);
      expect(events[1]!.event.value).toMatchObject({ error: "boom", failedStepPath: "2", failedStepName: "explode" });
      const manifest = await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId);
      expect(manifest).toMatchObject({ status: ActionRunStatus.FAILED, error: "boom", failedStepName: "explode" });
      expect(manifest?.outputLocation.case).toBeUndefined();
    });

    it("a cancelled thread: failed, and a CANCELLED manifest", async () => {
      fakes.scripts.behaviours.set("action_echo_text", () => ({
        reports: [{ kind: "cancelled", reason: "stop", stepPath: "1" }],
      }));
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const events = await collect(parts.runner.execute(prepared));
      expect(events.at(-1)!.event).toMatchObject({ case: "failed", value: { error: "the run was cancelled: stop" } });
      expect((await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId))?.status).toBe(
        ActionRunStatus.CANCELLED,
      );
    });

    it("an output the routing refuses: failed after started, never a thrown error", async () => {
      fakes.scripts.behaviours.set("action_export_rows", () => ({ output: { nothing: true } }));
      fakes.tables.tables.set(`${ORG}/${BUCKET}/people`, { columns: [], mergeKeys: [], rows: [] });
      const table = create(SelectionSchema, {
        pillar: "tables",
        shape: { case: "tableSingle", value: { bucket: BUCKET, tableName: "people" } },
      });
      const events = await collect(await run("export_rows", table));
      expect(events.map((event) => event.event.case)).toEqual(["started", "failed"]);
      expect(events[1]!.event.value).toMatchObject({ error: expect.stringContaining("content") });
    });

    it("a dispatch of the queue without prepared inputs, resolving them at execution", async () => {
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const events = await collect(
        parts.runner.execute({ action: prepared.action, dispatch: { ...prepared.dispatch } }),
      );
      expect(events.at(-1)!.event.case).toBe("completed");
      expect(fakes.scripts.started[0]!.input).toEqual({ text: "hello actions", source_key: "notes.txt" });
    });

    it("a resumed run on its existing thread, calling onThread before started", async () => {
      const seen: string[] = [];
      fakes.scripts.behaviours.set("action_echo_text", () => ({ output: { text: "once" } }));
      const first = await parts.runner.prepare(ORG, { actionId: "echo_text", selection: objectSelection("notes.txt") });
      await collect(parts.runner.execute(first));
      const firstStart = (await parts.manifests.find(ORG, BUCKET, first.dispatch.runId))!.startedAtMs;
      clock += 60_000;
      const again = parts.runner.execute(first, {
        threadId: "thread-1",
        onThread: async (threadId) => void seen.push(threadId),
      });
      const events = await collect(again);
      expect(seen).toEqual(["thread-1"]);
      expect(fakes.scripts.started).toHaveLength(1);
      expect(events[0]!.event.value).toMatchObject({ threadId: "thread-1", startedAtMs: firstStart });
      expect((await parts.manifests.find(ORG, BUCKET, first.dispatch.runId))!.startedAtMs).toBe(firstStart);
    });

    it("a queued dispatch: params checked when enqueued, the data read only when it executes", async () => {
      const queued = {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
        enqueuedAtMs: 1_700_000_000_000,
      };
      const bad = await refusal(parts.runner.prepare(ORG, { ...queued, params: { uppercase: "yes" } }));
      expect(bad.rawMessage).toContain("params.uppercase");
      const unknown = await refusal(parts.runner.prepare(ORG, { ...queued, params: { colour: 1 } }));
      expect(unknown.rawMessage).toContain("params.colour");
      const prepared = await parts.runner.prepare(ORG, { ...queued, params: { uppercase: true } });
      expect(fakes.objects.reads).toBe(0);
      expect(prepared.dispatch.enqueuedAtMs).toBe(1_700_000_000_000);
      expect(prepared.dispatch.reverseTs).toBe(reverseTimestamp(1_700_000_000_000));
      const events = await collect(parts.runner.execute(prepared));
      expect(events.at(-1)!.event.case).toBe("completed");
      expect(fakes.scripts.started[0]!.input).toEqual({
        uppercase: true,
        text: "hello actions",
        source_key: "notes.txt",
      });
    });

    it("throws what onThread throws, recording no failure", async () => {
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      const lost = new Error("claim lost");
      const events = parts.runner.execute(prepared, {
        onThread: async () => {
          throw lost;
        },
      });
      await expect(collect(events)).rejects.toBe(lost);
      const manifest = await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId);
      expect(manifest?.status).toBe(ActionRunStatus.RUNNING);
    });

    it("failDispatch: a FAILED manifest in the bucket's history", async () => {
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      await parts.runner.failDispatch(prepared.dispatch, "the script service is down");
      const manifest = await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId);
      expect(manifest).toMatchObject({ status: ActionRunStatus.FAILED, error: "the script service is down" });
    });
  });

  describe("routes the output", () => {
    it("inline up to 16 KB, else to output.txt beside the manifest", async () => {
      fakes.scripts.behaviours.set("action_echo_text", () => ({ output: { text: "x".repeat(20_000) } }));
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "echo_text",
        selection: objectSelection("notes.txt"),
      });
      await collect(parts.runner.execute(prepared));
      const manifest = (await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId))!;
      expect(manifest.outputLocation.case).toBe("siblingFile");
      const file = manifest.outputLocation.case === "siblingFile" ? manifest.outputLocation.value : undefined;
      expect(file?.key).toBe(`${RUNS_PREFIX}${prepared.dispatch.reverseTs}_${prepared.dispatch.runId}/output.txt`);
      expect(file?.sizeBytes).toBe(20_000n);
      expect(fakes.objects.text(ORG, BUCKET, file!.key)).toBe("x".repeat(20_000));
    });

    it("a file route's content to a sibling file with its extension", async () => {
      fakes.tables.tables.set(`${ORG}/${BUCKET}/people`, { columns: [], mergeKeys: [], rows: [{ a: 1 }] });
      fakes.scripts.behaviours.set("action_export_rows", () => ({
        output: { content: "a\n1\n", content_type: "text/csv" },
      }));
      const table = create(SelectionSchema, {
        pillar: "tables",
        shape: { case: "tableSingle", value: { bucket: BUCKET, tableName: "people" } },
      });
      const prepared = await parts.runner.prepare(ORG, { actionId: "export_rows", selection: table });
      await collect(parts.runner.execute(prepared));
      const manifest = (await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId))!;
      expect(manifest.outputKind).toBe(OutputKind.FILE);
      expect(manifest.outputLocation).toMatchObject({ case: "siblingFile", value: { contentType: "text/csv" } });
      expect(manifest.outputLocation.case === "siblingFile" && manifest.outputLocation.value.key).toMatch(
        /output\.csv$/,
      );
    });

    it("a table route's rows into params.table_name, the event carrying row_count", async () => {
      fakes.scripts.behaviours.set("action_import_rows", (input) => ({
        output: {
          rows: input["rows"]!,
          columns: [
            { name: "name", type: "string" },
            { name: "age", type: "string" },
          ],
        },
      }));
      const events = await collect(await run("import_rows", objectSelection("people.csv"), { table_name: "people" }));
      const completed = events.at(-1)!;
      expect(completed.event.case === "completed" && completed.event.value.output).toEqual({
        columns: [
          { name: "name", type: "string" },
          { name: "age", type: "string" },
        ],
        row_count: 2,
      });
      expect(fakes.tables.tables.get(`${ORG}/${BUCKET}/people`)?.rows).toHaveLength(2);
    });

    it("a chunks route's vectors into params.collection as the object's chunks", async () => {
      fakes.vectors.addCollection(ORG, BUCKET, "kb");
      fakes.scripts.behaviours.set("action_embed", () => ({
        output: {
          vectors: [
            { id: "c0", values: [0.1, 0.2], content: "hello", metadata: { chunk_index: 0 } },
            { id: "c1", values: [0.3, 0.4], content: "actions", metadata: { chunk_index: 1 } },
          ],
        },
      }));
      const prepared = await parts.runner.prepare(ORG, {
        actionId: "embed",
        selection: objectSelection("notes.txt"),
        params: { collection: "kb" },
      });
      const events = await collect(parts.runner.execute(prepared));
      expect(events.at(-1)!.event).toMatchObject({ case: "completed", value: { output: { chunk_count: 2 } } });
      const manifest = (await parts.manifests.find(ORG, BUCKET, prepared.dispatch.runId))!;
      expect(manifest.outputLocation).toMatchObject({
        case: "vectorChunks",
        value: { collection: "kb", chunkIds: ["notes.txt#0", "notes.txt#1"], chunkCount: 2n },
      });
    });
  });

  async function run(actionId: string, selection: Selection, params: JsonObject = {}) {
    const prepared = await parts.runner.prepare(ORG, { actionId, selection, params });
    return parts.runner.execute(prepared);
  }
});
