import { create, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { beforeEach, describe, expect, it } from "vitest";
import { ActionEventSchema } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import { ActionRunStatus } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import {
  ActionsService,
  GetActionRunRequestSchema,
  GetActionRunResponseSchema,
  SaveActionOutputResponseSchema,
  ListAvailableActionsRequestSchema,
  ListRecentActionsRequestSchema,
  RunActionRequestSchema,
  SaveActionOutputRequestSchema,
  TableWriteMode,
} from "../../../../gen/platform/data/actions/v1/actions_service_pb.js";
import { SelectionSchema, type Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import { principalKey } from "../../auth/principal.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import { createActionRunHandlers, STOPPED_RUN_ERROR, type ActionRunHandlers } from "./action-run-handlers.js";
import { fakePorts, testAction } from "./actions-test-fakes.js";
import { createActionRunner } from "./create-action-runner.js";
import { RUNS_PREFIX } from "./run-keys.js";
import { sweepExpiredRuns } from "./run-retention.js";

/** Saves of one run take turns through the database in the server (run-save-lock.test.ts); these run one at a time. */
const unlocked = <T>(_orgId: string, _runId: string, save: () => Promise<T>) => save();

const ORG = "org-a";
const OTHER = "org-b";
const BUCKET = "docs";
const DAY = 24 * 60 * 60 * 1000;

const ACTIONS = [
  testAction({
    id: "extract",
    name: "Extract text",
    description: "Pull the words out of a document.",
    acceptedContentTypes: ["text/plain", "text/html"],
    acceptedExtensions: [".txt", ".html"],
    bind: { text: "object.text" },
    output: { kind: "TEXT", route: "inline", field: "text" },
  }),
  testAction({
    id: "rows",
    description: "Rows of the object.",
    acceptedExtensions: [".csv"],
    bind: { rows: "object.rows" },
    output: { kind: "JSON", route: "inline", field: "rows" },
  }),
  testAction({ id: "describe", pillars: ["tables"], shapes: ["table_single"], bind: { name: "table.name" } }),
  testAction({ id: "ask", pillars: [""], shapes: ["none"], bind: { bucket: "bucket" } }),
  testAction({ id: "broken", bind: { text: "object.text" } }),
];

function contextOf(orgId: string) {
  return createHandlerContext({
    service: ActionsService,
    method: ActionsService.method.runAction,
    protocolName: "in-process",
    requestMethod: "POST",
    url: "in-process://test",
    contextValues: createContextValues().set(principalKey, {
      orgId,
      orgName: orgId,
      keyId: "key",
      roles: new Set(["data.editor"]),
    }),
  });
}

const objectSelection = (key: string, bucket = BUCKET): Selection =>
  create(SelectionSchema, { pillar: "objects", shape: { case: "objectSingle", value: { bucket, key } } });

async function refusal(pending: unknown): Promise<ConnectError> {
  const error = await Promise.resolve(pending).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

describe("the actions service's run handlers", () => {
  let fakes: ReturnType<typeof fakePorts>;
  let handlers: ActionRunHandlers;
  let parts: ReturnType<typeof createActionRunner>;
  let clock: number;
  const ctx = contextOf(ORG);

  beforeEach(() => {
    clock = 1_750_000_000_000;
    fakes = fakePorts();
    fakes.objects.addBucket(ORG, BUCKET);
    fakes.objects.addBucket(ORG, "archive");
    fakes.objects.addBucket(OTHER, "private");
    fakes.objects.store(ORG, BUCKET, "notes.txt", "hello", "text/plain");
    fakes.objects.store(ORG, BUCKET, "people.csv", "name,age\nada,36\n", "text/csv");
    fakes.objects.store(OTHER, "private", "secret.txt", "no", "text/plain");
    for (const action of ACTIONS)
      fakes.templates.templates.set(action.template, {
        id: action.template,
        description: `Template ${action.id}.`,
        inputs: {
          type: "object",
          properties: { text: { type: "string" }, depth: { type: "integer", default: 2, description: "How deep." } },
        },
        outputs: {},
      });
    fakes.scripts.behaviours.set("action_extract", (input) => ({ output: { text: String(input["text"]) } }));
    fakes.scripts.behaviours.set("action_rows", (input) => ({ output: { rows: input["rows"]! } }));
    fakes.scripts.behaviours.set("action_broken", () => ({
      reports: [{ kind: "failed", error: "step exploded", failedStepPath: "1", failedStepName: "boom" }],
    }));
    parts = createActionRunner({ ports: fakes.ports, actions: ACTIONS, now: () => clock });
    handlers = createActionRunHandlers({ ports: fakes.ports, ...parts, saveLock: unlocked, now: () => clock });
  });

  const getRun = async (fields: { bucket: string; runId: string; inlineSibling?: boolean }) =>
    create(GetActionRunResponseSchema, await handlers.getActionRun(create(GetActionRunRequestSchema, fields), ctx));

  async function runAction(actionId: string, selection: Selection, params: JsonObject = {}) {
    const events = [];
    for await (const event of handlers.runAction(create(RunActionRequestSchema, { actionId, selection, params }), ctx))
      events.push(create(ActionEventSchema, event));
    const first = events[0]?.event;
    const started = first?.case === "started" ? first.value : undefined;
    return { events, runId: started?.runId ?? "" };
  }

  it("list the actions that take a selection, with their forms, narrowed by search", async () => {
    const list = async (selection: Selection, search = "") =>
      (
        await handlers.listAvailableActions(create(ListAvailableActionsRequestSchema, { selection, search }), ctx)
      ).actions!.map((action) => action.actionId);
    expect(await list(objectSelection("notes.txt"))).toEqual(["extract", "broken"]);
    expect(await list(objectSelection("people.csv"))).toEqual(["rows", "broken"]);
    expect(await list(objectSelection("notes.txt"), "WORDS")).toEqual(["extract"]);
    expect(
      await list(create(SelectionSchema, { pillar: "", shape: { case: "none", value: { bucket: BUCKET } } })),
    ).toEqual(["ask"]);
    const [extract] = (
      await handlers.listAvailableActions(
        create(ListAvailableActionsRequestSchema, { selection: objectSelection("notes.txt") }),
        ctx,
      )
    ).actions!;
    // The bound input `text` is not part of the form.
    expect(extract!.paramsForm?.inputs?.map((input) => input.name)).toEqual(["depth"]);
    expect(extract!.paramsForm?.inputs?.[0]).toMatchObject({ type: "integer", required: false });
    const foreign = await refusal(
      handlers.listAvailableActions(
        create(ListAvailableActionsRequestSchema, { selection: objectSelection("secret.txt", "private") }),
        ctx,
      ),
    );
    expect(foreign.code).toBe(Code.NotFound);
  });

  it("run an action, list it newest first with filters, and read it back", async () => {
    const first = await runAction("extract", objectSelection("notes.txt"));
    expect(first.events.map((event) => event.event.case)).toEqual(["started", "completed"]);
    clock += 1000;
    const failed = await runAction("broken", objectSelection("notes.txt"));
    expect(failed.events.at(-1)!.event).toMatchObject({ case: "failed", value: { error: "step exploded" } });
    clock += 1000;
    const third = await runAction("rows", objectSelection("people.csv"));

    const recent = async (fields: Record<string, unknown> = {}) =>
      (
        await handlers.listRecentActions(create(ListRecentActionsRequestSchema, { bucket: BUCKET, ...fields }), ctx)
      ).runs!.map((run) => run.runId);
    expect(await recent()).toEqual([third.runId, failed.runId, first.runId]);
    expect(await recent({ limit: 2 })).toEqual([third.runId, failed.runId]);
    expect(await recent({ status: ActionRunStatus.FAILED })).toEqual([failed.runId]);
    expect(await recent({ actionId: "extract" })).toEqual([first.runId]);

    const got = await handlers.getActionRun(
      create(GetActionRunRequestSchema, { bucket: BUCKET, runId: first.runId }),
      ctx,
    );
    expect(got.manifest).toMatchObject({ status: ActionRunStatus.COMPLETED, actionId: "extract" });
    const missing = await refusal(
      handlers.getActionRun(
        create(GetActionRunRequestSchema, { bucket: BUCKET, runId: "0190f0a0-0000-7000-8000-000000000000" }),
        ctx,
      ),
    );
    expect(missing.code).toBe(Code.NotFound);
    // Another organization sees neither the bucket nor its runs.
    const foreign = await refusal(
      handlers.getActionRun(
        create(GetActionRunRequestSchema, { bucket: BUCKET, runId: first.runId }),
        contextOf(OTHER),
      ),
    );
    expect(foreign.code).toBe(Code.NotFound);
  });

  it("read a sibling output inline: JSON parsed, text as a string", async () => {
    const big = "y".repeat(17_000);
    fakes.scripts.behaviours.set("action_extract", () => ({ output: { text: big } }));
    const text = await runAction("extract", objectSelection("notes.txt"));
    const got = await getRun({ bucket: BUCKET, runId: text.runId, inlineSibling: true });
    expect(got.manifest?.outputLocation.case).toBe("siblingFile");
    expect(toJson(ValueSchema, got.siblingOutput!)).toBe(big);
    fakes.scripts.behaviours.set("action_rows", () => ({
      output: { rows: Array.from({ length: 900 }, (_, i) => ({ i, pad: "zzzzzzzzzzzzzzzzzz" })) },
    }));
    const json = await runAction("rows", objectSelection("people.csv"));
    const gotJson = await getRun({ bucket: BUCKET, runId: json.runId, inlineSibling: true });
    expect(gotJson.manifest?.outputLocation).toMatchObject({
      case: "siblingFile",
      value: { contentType: "application/json" },
    });
    expect((toJson(ValueSchema, gotJson.siblingOutput!) as unknown[]).length).toBe(900);
  });

  it("save an output to a key once, however often it is asked", async () => {
    const { runId } = await runAction("extract", objectSelection("notes.txt"));
    const save = async (bucket = "archive", key = "saved/notes.txt", context = ctx) =>
      create(
        SaveActionOutputResponseSchema,
        await handlers.saveActionOutput(
          create(SaveActionOutputRequestSchema, {
            bucket: BUCKET,
            runId,
            target: { case: "s3", value: { targetBucket: bucket, targetKey: key } },
          }),
          context,
        ),
      );
    const first = await save();
    expect(first.promotion?.location).toMatchObject({
      case: "s3Object",
      value: { bucket: "archive", key: "saved/notes.txt" },
    });
    expect(fakes.objects.text(ORG, "archive", "saved/notes.txt")).toBe("hello");
    const puts = fakes.objects.puts;
    const again = await save();
    expect(again.promotion).toEqual(first.promotion);
    expect(fakes.objects.puts).toBe(puts);
    expect(again.manifest?.promoted).toHaveLength(1);
    expect((await refusal(save("private"))).code).toBe(Code.NotFound);
    expect((await refusal(save("archive", "x", contextOf(OTHER)))).code).toBe(Code.NotFound);
  });

  it("save an output's rows to a table, created when asked, once per table", async () => {
    const { runId } = await runAction("rows", objectSelection("people.csv"));
    const save = async (createIfMissing: boolean) =>
      create(
        SaveActionOutputResponseSchema,
        await handlers.saveActionOutput(
          create(SaveActionOutputRequestSchema, {
            bucket: BUCKET,
            runId,
            target: {
              case: "warehouseTable",
              value: { targetTableName: "people", createIfMissing, writeMode: TableWriteMode.APPEND },
            },
          }),
          ctx,
        ),
      );
    expect((await refusal(save(false))).code).toBe(Code.NotFound);
    const first = await save(true);
    expect(first.promotion?.location).toMatchObject({
      case: "warehouseRows",
      value: { bucket: BUCKET, tableName: "people", rowCount: 1n },
    });
    await save(true);
    expect(fakes.tables.writes).toBe(1);
    expect(fakes.tables.tables.get(`${ORG}/${BUCKET}/people`)?.rows).toEqual([{ name: "ada", age: "36" }]);
    const manifest = await parts.manifests.find(ORG, BUCKET, runId);
    expect(manifest?.promoted).toHaveLength(1);
  });

  it("refuse to save a run that did not complete", async () => {
    const { runId } = await runAction("broken", objectSelection("notes.txt"));
    const error = await refusal(
      handlers.saveActionOutput(
        create(SaveActionOutputRequestSchema, {
          bucket: BUCKET,
          runId,
          target: { case: "s3", value: { targetBucket: BUCKET, targetKey: "x.txt" } },
        }),
        ctx,
      ),
    );
    expect(error.code).toBe(Code.FailedPrecondition);
  });

  it("end a run the stopping service cuts short with failed, and a FAILED manifest", async () => {
    const stopping = new AbortController();
    const stoppable = createActionRunHandlers({
      ports: fakes.ports,
      ...parts,
      saveLock: unlocked,
      stopping: stopping.signal,
    });
    fakes.scripts.behaviours.set("action_extract", () => ({ endless: true }));
    const events = [];
    const request = create(RunActionRequestSchema, { actionId: "extract", selection: objectSelection("notes.txt") });
    for await (const event of stoppable.runAction(request, ctx)) {
      const message = create(ActionEventSchema, event);
      events.push(message);
      if (message.event.case === "started") stopping.abort();
    }
    expect(events.map((event) => event.event.case)).toEqual(["started", "failed"]);
    expect(events[1]!.event.value).toMatchObject({ error: STOPPED_RUN_ERROR });
    const runId = events[0]!.event.case === "started" ? events[0]!.event.value.runId : "";
    expect((await parts.manifests.find(ORG, BUCKET, runId))?.status).toBe(ActionRunStatus.FAILED);
  });

  it("sweep run folders past the retention unless their output was saved", async () => {
    const old = await runAction("extract", objectSelection("notes.txt"));
    const kept = await runAction("extract", objectSelection("notes.txt"));
    await handlers.saveActionOutput(
      create(SaveActionOutputRequestSchema, {
        bucket: BUCKET,
        runId: kept.runId,
        target: { case: "s3", value: { targetBucket: "archive", targetKey: "kept.txt" } },
      }),
      ctx,
    );
    clock += 8 * DAY;
    const fresh = await runAction("extract", objectSelection("notes.txt"));
    const removed = await sweepExpiredRuns({
      objects: fakes.objects,
      manifests: parts.manifests,
      buckets: async () => [{ orgId: ORG, bucket: BUCKET }],
      retentionMs: 7 * DAY,
      now: () => clock,
    });
    expect(removed).toBe(1);
    const folders = fakes.objects.keys(ORG, BUCKET).filter((key) => key.startsWith(RUNS_PREFIX));
    expect(folders.some((key) => key.includes(old.runId))).toBe(false);
    expect(folders.some((key) => key.includes(kept.runId))).toBe(true);
    expect(folders.some((key) => key.includes(fresh.runId))).toBe(true);
  });
});
