import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { DrizzleQueryError } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { LEXICAL_HASH_MODEL_ID, LexicalHashEmbedder } from "../../../embeddings/lexical-hash-embedder.js";
import { compileContract } from "../dsl/contract.js";
import { parseScript } from "../dsl/parse-script.js";
import { SHIPPED_TEMPLATES_DIR } from "../templates/template-catalog.js";
import { createThreadStore, type ThreadRow, type ThreadStore } from "../threads/thread-store.js";
import { createNativeToolSource } from "../tools/native-tools.js";
import { sendJson, startTestServer, type TestServer } from "../tools/test-kit.js";
import { ToolError } from "../tools/tool-error.js";
import type { Tool, ToolContext } from "../tools/tool.js";
import { createToolRegistry, type ToolRegistry } from "../tools/tool-registry.js";
import { runThread, type InterpreterDeps } from "./interpreter.js";
import { StepFailure, Suspension } from "./run-outcome.js";

// The interpreter over a real store, run the way the worker runs it: once per claim, replaying
// from the top what the store says already happened. Each test drives the replays itself (a
// `wait` releases the thread; the next run starts from the top with the clock moved on).
let database: TestDatabase;
let store: ThreadStore;
let tools: ToolRegistry;
let llm: TestServer;
const OWNER = "interpreter-test";
const clock = { ms: 1_700_000_000_000 };

/** Calls of the probe tools, by tool name. */
const calls: { tool: string; stepPath: string; input: JsonObject }[] = [];
/** What the interpreter logged. */
const logs: { message: string; fields: Record<string, unknown> }[] = [];
/** What the model answers next, one per call; the last answer repeats. */
let modelAnswers: string[] = [];

function probeTool(name: string, invoke: (input: JsonObject, context: ToolContext) => Promise<JsonValue>): Tool {
  return {
    name,
    version: "1",
    description: name,
    inputs: [{ name: "value", type: "", required: false, description: "any" }],
    outputs: [],
    runtime: { entrypoint: "", language: "native", image: "", timeoutMs: 10_000, memoryMiB: 0, gpu: "" },
    createdAtMs: 0,
    async invoke(input, context) {
      calls.push({ tool: name, stepPath: context.stepPath, input });
      return invoke(input, context);
    },
  };
}

const probes: Tool[] = [
  probeTool("test.echo", async (input) => ({ echo: input.value ?? null })),
  // Fails retryably until its fifth call: a loop that ignores maxAttempts ends up succeeding.
  probeTool("test.flaky", async () => {
    if (calls.filter((call) => call.tool === "test.flaky").length < 5)
      throw new ToolError("unavailable", "flaky is down");
    return { recovered: true };
  }),
  // Fails the first call with a given value, then echoes it.
  probeTool("test.second_time", async (input) => {
    if (calls.filter((call) => call.tool === "test.second_time" && call.input.value === input.value).length < 2)
      throw new ToolError("unavailable", "not yet");
    return { echo: input.value ?? null };
  }),
];

beforeAll(async () => {
  database = await openTestDatabase();
  store = createThreadStore(database.db);
  // A stand-in OpenAI-compatible endpoint on loopback: answers the queued branch choices.
  llm = await startTestServer((_request, response) => {
    const content = modelAnswers.length > 1 ? modelAnswers.shift()! : (modelAnswers[0] ?? "");
    sendJson(response, 200, {
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    });
  });
  tools = createToolRegistry([
    createNativeToolSource({ llm: { baseUrl: `${llm.url}/v1`, model: "test-model" } }),
    { listTools: async () => probes },
  ]);
});
afterAll(async () => {
  await llm?.close();
  await database?.close();
});
beforeEach(() => {
  calls.length = 0;
  modelAnswers = [];
});

/** A thread row as a worker holds it: RUNNING, leased to this test. */
async function leasedThread(
  source: string,
  input: JsonObject = {},
  env: Record<string, string> = {},
): Promise<ThreadRow> {
  const orgId = await database.createOrganization();
  return store.insert({
    orgId,
    scriptName: "test",
    scriptVersion: 1,
    status: "running",
    input,
    env,
    metadata: {},
    totalSteps: parseScript(source).steps.length,
    leaseOwner: OWNER,
    leaseExpiresAt: clock.ms + 3_600_000_000,
    startedAt: clock.ms,
  });
}

/** One run of the thread as a claim starts it: the row as stored now, the document, the store. */
async function runOnce(
  thread: ThreadRow,
  source: string,
  signal = new AbortController().signal,
  overrides: Partial<InterpreterDeps> = {},
): Promise<JsonValue> {
  const row = (await store.get(thread.orgId, thread.id))!;
  return runThread(row, parseScript(source), {
    store,
    tools,
    artifacts: { write: async () => undefined as never },
    signal,
    now: () => clock.ms,
    log: (message, fields) => logs.push({ message, fields }),
    saveStep: async (step) => {
      if (!(await store.saveStep(step, OWNER))) throw new Error("lease lost");
    },
    beginStep: (step, event) => store.beginStep(OWNER, step, event),
    finishStep: (step, event) => store.finishStep(OWNER, step, event),
    emit: async (event) => void (await store.appendEvent(row.orgId, row.id, event)),
    ...overrides,
  });
}

/** Runs the thread to its end: each time it suspends, the clock moves to its wake-up time and it is run again. */
async function runToEnd(
  thread: ThreadRow,
  source: string,
  signal?: AbortSignal,
): Promise<{ output: JsonValue; runs: number }> {
  for (let runs = 1; runs < 50; runs++) {
    try {
      return { output: await runOnce(thread, source, signal), runs };
    } catch (error) {
      if (!(error instanceof Suspension) || error.runAfter === 0) throw error;
      clock.ms = Math.max(clock.ms, error.runAfter);
    }
  }
  throw new Error("the thread never ended");
}

const eventsOf = async (thread: ThreadRow) => store.eventsAfter(thread.orgId, thread.id, 0);

describe("replaying a thread", () => {
  it("restores the variables of a completed set step", async () => {
    const source = `dsl: script/1
steps:
  - {id: remember, set: {values: {greeting: hello, count: 2}}}
  - {id: nap, wait: {for: 1s}}
  - {id: use, set: {values: {said: "\${vars.greeting} x\${vars.count}"}}}
output: {said: "\${vars.said}", greeting: "\${vars.greeting}"}
`;
    const thread = await leasedThread(source);
    const { output, runs } = await runToEnd(thread, source);
    expect(runs).toBe(2);
    expect(output).toEqual({ said: "hello x2", greeting: "hello" });
  });

  it("takes the saved decision of a decide step and records the decision once", async () => {
    // The branch waits, so the decide step is entered again on the replay.
    const source = `dsl: script/1
inputs: {type: object, properties: {n: {type: integer}}}
steps:
  - id: route
    decide:
      branches:
        - {name: big, when: "inputs.n > 10", steps: [{id: nap_big, wait: {for: 1s}}, {id: mark_big, set: {values: {size: big}}}]}
        - {name: small, default: true, steps: [{id: nap_small, wait: {for: 1s}}, {id: mark_small, set: {values: {size: small}}}]}
output: "\${steps.route.output}"
`;
    const thread = await leasedThread(source, { n: 3 });
    // The decision recorded before the first wait says `big`; a replay that re-evaluated the rules would take `small`.
    await expect(runOnce(thread, source)).rejects.toBeInstanceOf(Suspension);
    const decided = (await store.step(thread.orgId, thread.id, "0"))!;
    expect(decided.input).toEqual({
      decision: { strategy: "rule", chosen_branch: "small", reasoning: "no condition matched: default branch" },
    });
    await store.saveStep(
      { ...decided, input: { decision: { strategy: "rule", chosen_branch: "big", reasoning: "recorded earlier" } } },
      OWNER,
    );

    clock.ms += 1_000;
    const { output } = await runToEnd(thread, source);
    expect(output).toEqual({
      strategy: "rule",
      chosen_branch: "big",
      reasoning: "recorded earlier",
      result: { size: "big" },
    });
    expect((await eventsOf(thread)).filter((event) => event.kind === "decision")).toHaveLength(1);
  });

  it("never asks the model again for a decision it made", async () => {
    const source = `dsl: script/1
steps:
  - id: route
    decide:
      strategy: llm
      prompt: "Which way?"
      branches:
        - {name: left, description: "go left", steps: [{id: nap, wait: {for: 1s}}, {id: went, set: {values: {way: left}}}]}
        - {name: right, description: "go right", steps: [{id: other, set: {values: {way: right}}}]}
output: "\${steps.route.output}"
`;
    modelAnswers = [
      '{"branch": "left", "reasoning": "left is shorter"}',
      '{"branch": "right", "reasoning": "changed my mind"}',
    ];
    const asked = llm.requests.length;
    const thread = await leasedThread(source);
    const { output, runs } = await runToEnd(thread, source);
    expect(runs).toBe(2);
    expect(llm.requests.length - asked).toBe(1);
    expect(output).toEqual({
      strategy: "llm",
      chosen_branch: "left",
      reasoning: "left is shorter",
      result: { way: "left" },
    });
  });
});

describe("retries", () => {
  it("makes at most maxAttempts attempts, then fails the step with the last error", async () => {
    const source = `dsl: script/1
steps:
  - {id: call, retry: {maxAttempts: 3, backoff: fixed, initial: 1ms}, execute: {tool: test.flaky}}
`;
    const thread = await leasedThread(source);
    const failure = await runToEnd(thread, source).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StepFailure);
    expect(failure).toMatchObject({ message: "flaky is down", stepPath: "0" });
    expect(calls.filter((call) => call.tool === "test.flaky")).toHaveLength(3);
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ status: "failed", error: "flaky is down" });
  });

  it("releases the thread for each backoff and continues the attempts when it is claimed again", async () => {
    const source = `dsl: script/1
steps:
  - {id: call, retry: {maxAttempts: 4, backoff: exponential, initial: 1s, max: 3s}, execute: {tool: test.flaky}}
`;
    const thread = await leasedThread(source);
    const start = clock.ms;
    const suspended = async () => {
      const error = await runOnce(thread, source).catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(Suspension);
      return error as Suspension;
    };
    const first = await suspended();
    expect([first.reason, first.runAfter - start]).toEqual(["retry", 1_000]);
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({
      status: "waiting",
      attempt: 2,
      wakeAt: start + 1_000,
      error: "flaky is down",
    });
    // Claimed again before the retry is due (the process died between saving it and releasing the thread): no attempt.
    expect((await suspended()).runAfter).toBe(start + 1_000);
    expect(calls).toHaveLength(1);

    clock.ms = start + 1_000;
    expect((await suspended()).runAfter).toBe(start + 3_000);
    clock.ms = start + 3_000;
    expect((await suspended()).runAfter).toBe(start + 6_000);
    clock.ms = start + 6_000;
    await expect(runOnce(thread, source)).rejects.toMatchObject({ name: "StepFailure", message: "flaky is down" });
    expect(calls).toHaveLength(4);
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ status: "failed", attempt: 4 });
  });

  it("keeps a resumed step's override input for its retries", async () => {
    const source = `dsl: script/1
steps:
  - {id: call, retry: {maxAttempts: 2, backoff: fixed, initial: 1s}, execute: {tool: test.second_time, input: {value: from-template}}}
`;
    const thread = await leasedThread(source);
    await store.saveStep(
      {
        orgId: thread.orgId,
        threadId: thread.id,
        stepPath: "0",
        stepId: "call",
        name: "call",
        primitive: "execute",
        tool: "test.second_time",
        status: "failed",
        error: "earlier",
      },
      OWNER,
    );
    await store.update(thread.id, OWNER, { resumeOverride: { value: `override-${thread.id}` } });
    await expect(runOnce(thread, source)).rejects.toBeInstanceOf(Suspension);
    // The worker clears the override when it releases the thread: it was used.
    await store.update(thread.id, OWNER, { resumeOverride: null });
    clock.ms += 1_000;
    expect(await runOnce(thread, source)).toEqual({ echo: `override-${thread.id}` });
    expect(calls.map((call) => call.input.value)).toEqual([`override-${thread.id}`, `override-${thread.id}`]);
  });

  it("leaves no abort listener behind on the run's signal", async () => {
    const source = `dsl: script/1
steps:
  - {id: call, timeout: 5s, retry: {maxAttempts: 3, backoff: fixed, initial: 1ms}, execute: {tool: test.flaky}}
`;
    const controller = new AbortController();
    const thread = await leasedThread(source);
    await expect(runToEnd(thread, source, controller.signal)).rejects.toBeInstanceOf(StepFailure);
    expect(calls).toHaveLength(3);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("suspends a parallel step until the first of its branches is due", async () => {
    const source = `dsl: script/1
steps:
  - id: both
    parallel:
      branches:
        - {name: slow, steps: [{id: call, retry: {maxAttempts: 2, initial: 1h}, execute: {tool: test.flaky}}]}
        - {name: quick, steps: [{id: nap, wait: {for: 2s}}]}
`;
    const thread = await leasedThread(source);
    const start = clock.ms;
    await expect(runOnce(thread, source)).rejects.toMatchObject({
      name: "Suspension",
      reason: "wait",
      runAfter: start + 2_000,
    });
    clock.ms = start + 2_000;
    await expect(runOnce(thread, source)).rejects.toMatchObject({
      name: "Suspension",
      reason: "retry",
      runAfter: start + 3_600_000,
    });
    expect(await store.step(thread.orgId, thread.id, "0.1.0")).toMatchObject({ status: "completed" });
    expect(calls).toHaveLength(1);
  });
});

describe("the llm strategy of decide", () => {
  const source = `dsl: script/1
inputs: {type: object, properties: {subject: {type: string}}}
steps:
  - id: route
    decide:
      strategy: llm
      model: small-model
      prompt: "How urgent is: \${inputs.subject}?"
      branches:
        - {name: urgent, description: "someone must act now", steps: [{id: page, execute: {tool: test.echo, input: {value: paged}}}]}
        - {name: normal, default: true, description: "everything else"}
output: "\${steps.route.output}"
`;

  it("asks llm.complete with the prompt and the branches, and runs the branch the model chose", async () => {
    modelAnswers = ['{"branch": "urgent", "reasoning": "the site is down"}'];
    const thread = await leasedThread(source, { subject: "site down" });
    const { output } = await runToEnd(thread, source);
    expect(output).toEqual({
      strategy: "llm",
      chosen_branch: "urgent",
      reasoning: "the site is down",
      result: { echo: "paged" },
    });

    const request = llm.requests.at(-1)!;
    expect(request.url).toBe("/v1/chat/completions");
    expect(request.headers["idempotency-key"]).toBe(`${thread.id}:0`);
    const body = JSON.parse(request.body) as {
      model: string;
      messages: { content: string }[];
      response_format: unknown;
    };
    expect(body.model).toBe("small-model");
    expect(body.response_format).toEqual({ type: "json_object" });
    const prompt = body.messages[0]!.content;
    expect(prompt).toContain("How urgent is: site down?");
    expect(prompt).toContain("- urgent: someone must act now");
    expect(prompt).toContain("- normal: everything else");
    expect(prompt).toMatch(/Answer with JSON only/);

    const decisions = (await eventsOf(thread)).filter((event) => event.kind === "decision");
    expect(decisions.map((event) => [event.stepPath, event.payload])).toEqual([
      ["0", { strategy: "llm", chosenBranch: "urgent", reasoning: "the site is down" }],
    ]);
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ tool: "llm.complete", status: "completed" });
    expect(calls.map((call) => call.stepPath)).toEqual(["0.0.0"]);
  });
});

describe("the llm strategy when the model names no branch", () => {
  const source = (withDefault: boolean) => `dsl: script/1
steps:
  - id: route
    decide:
      strategy: llm
      prompt: "Pick one"
      branches:
        - {name: first, description: "the first"}
        - {name: second, default: ${withDefault}, description: "the second"}
output: "\${steps.route.output}"
`;

  it("takes the default branch", async () => {
    modelAnswers = ['{"branch": "third", "reasoning": "none fits"}'];
    const thread = await leasedThread(source(true));
    const { output } = await runToEnd(thread, source(true));
    expect(output).toEqual({
      strategy: "llm",
      chosen_branch: "second",
      reasoning: 'the model chose "third", which is not one of first, second: default branch',
      result: null,
    });
  });

  it("fails the step when there is no default branch", async () => {
    modelAnswers = ['{"reasoning": "no idea"}'];
    const thread = await leasedThread(source(false));
    await expect(runToEnd(thread, source(false))).rejects.toMatchObject({
      name: "StepFailure",
      message: 'the model chose "", which is not one of first, second',
      stepPath: "0",
    });
  });
});

describe("the bindings of decide and parallel branches", () => {
  it("are seen by later steps, and bound again from the record when the thread replays", async () => {
    const source = `dsl: script/1
steps:
  - id: route
    decide:
      branches:
        - {name: only, default: true, steps: [{id: mark, set: {values: {size: big}}}, {id: look, execute: {tool: test.echo, input: {value: 7}}}]}
  - id: fan
    parallel:
      branches:
        - {name: a, steps: [{id: left, set: {values: {side: left}}}]}
        - {name: b, steps: [{id: right, execute: {tool: test.echo, input: {value: r}}}]}
  - {id: early, set: {values: {seen: "\${vars.size}/\${steps.look.output.echo}/\${vars.side}/\${steps.right.output.echo}"}}}
  - {id: nap, wait: {for: 1s}}
output: {seen: "\${vars.seen}", late: "\${vars.size}/\${steps.look.output.echo}/\${vars.side}/\${steps.right.output.echo}", mark: "\${has(steps.mark)}"}
`;
    const thread = await leasedThread(source);
    const { output, runs } = await runToEnd(thread, source);
    expect(runs).toBe(2);
    expect(output).toEqual({ seen: "big/7/left/r", late: "big/7/left/r", mark: true });
    expect(calls.map((call) => call.stepPath).sort()).toEqual(["0.0.1", "1.1.0"]);
  });
});

describe("failures and values the database cannot hold as they are", () => {
  it("stores a call's output holding NUL as it was returned", async () => {
    const source = `dsl: script/1
inputs: {type: object, properties: {text: {type: string}}}
steps:
  - {id: call, execute: {tool: test.echo, input: {value: "\${inputs.text}"}}}
output: "\${steps.call.output}"
`;
    const thread = await leasedThread(source, { text: "x\u0000y" });
    expect((await runToEnd(thread, source)).output).toEqual({ echo: "x\u0000y" });
    expect((await store.step(thread.orgId, thread.id, "0"))?.output).toEqual({ echo: "x\u0000y" });
  });

  it("records a database failure as an internal error, and logs it without the statement's parameters", async () => {
    const source = `dsl: script/1
steps:
  - {id: call, execute: {tool: test.echo, input: {value: "\${env.API_TOKEN}"}}}
`;
    const thread = await leasedThread(source, {}, { API_TOKEN: "tok-secret-123" });
    const refused = Object.assign(new Error("unsupported Unicode escape sequence"), {
      severity: "ERROR",
      code: "22P05",
      detail: "\\u0000 cannot be converted to text.",
      where: 'JSON data, line 1: {"value": "tok-secret-123',
    });
    const finishStep = async () => {
      throw new DrizzleQueryError(
        "update thread_steps set output = $1 where thread_id = $2",
        [JSON.stringify({ echo: "tok-secret-123" }), thread.id],
        refused,
      );
    };
    logs.length = 0;
    await expect(runOnce(thread, source, undefined, { finishStep })).rejects.toMatchObject({
      name: "StepFailure",
      message: "internal error",
      stepPath: "0",
    });
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ status: "failed", error: "internal error" });
    expect((await eventsOf(thread)).at(-1)).toMatchObject({ kind: "stepFailed", payload: { error: "internal error" } });
    expect(logs).toEqual([
      {
        message: "step failed with an internal error",
        fields: {
          threadId: thread.id,
          stepPath: "0",
          cause: [
            { name: "DrizzleQueryError", query: "update thread_steps set output = $1 where thread_id = $2" },
            { name: "Error", code: "22P05", message: "unsupported Unicode escape sequence" },
          ],
        },
      },
    ]);
    expect(JSON.stringify(logs)).not.toContain("tok-secret-123");
  });

  it("records a failure message holding NUL with U+FFFD in its place", async () => {
    const source = `dsl: script/1
inputs: {type: object, properties: {why: {type: string}}}
steps:
  - {id: stop, fail: {message: "\${inputs.why}"}}
`;
    const thread = await leasedThread(source, { why: "bad\u0000byte" });
    await expect(runOnce(thread, source)).rejects.toBeInstanceOf(StepFailure);
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ status: "failed", error: "bad\uFFFDbyte" });
  });
});

describe("the shipped embedding templates", () => {
  const read = (id: string) => readFileSync(join(SHIPPED_TEMPLATES_DIR, `${id}.yaml`), "utf8");
  const run = async (id: string, input: JsonObject) => {
    const source = read(id);
    const filled = compileContract(parseScript(source)).validateInput(input);
    return (await runToEnd(await leasedThread(source, filled), source)).output as JsonObject;
  };

  it("index a text and embed queries with the local embedder when no endpoint serves the model", async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} says orders ship within ${i} days.`).join("\n\n");
    const index = await run("text_embedding_index", {
      text,
      source_key: "docs/shipping.md",
      chunk_size: 400,
      chunk_overlap: 50,
      batch_size: 2,
      extracted_at: "2025-04-01T10:00:00Z",
    });
    const vectors = index.vectors as Array<{ id: string; values: number[]; metadata: JsonObject }>;
    expect(index).toMatchObject({
      embed_model: "nomic-embed-text-v1.5",
      dimensions: 768,
      embedded_with: LEXICAL_HASH_MODEL_ID,
    });
    expect(vectors.length).toBe(index.chunk_total);
    expect(vectors.length).toBeGreaterThan(4);
    expect(vectors.map((v) => v.id)).toEqual(vectors.map((_, i) => `docs/shipping.md#${i}`));
    expect(vectors.every((v) => v.values.length === 768)).toBe(true);
    expect(vectors[3]?.metadata).toMatchObject({
      chunk_index: 3,
      extracted_at: "2025-04-01T10:00:00Z",
      mime_type: "text/plain",
    });
    const search = await run("text_embedding_search", { queries: ["how long does shipping take", "paragraph 7"] });
    const queries = search.vectors as Array<{ query_index: number; query: string; values: number[] }>;
    expect(queries.map((q) => [q.query_index, q.query])).toEqual([
      [0, "how long does shipping take"],
      [1, "paragraph 7"],
    ]);
    expect(queries[1]?.values).toEqual(Array.from(new LexicalHashEmbedder(768).embedOne("paragraph 7")));
  });

  it("fail an image template clearly while no endpoint serves its model", async () => {
    const { exampleInput } = JSON.parse(
      readFileSync(join(SHIPPED_TEMPLATES_DIR, "face_embedding_index.meta.json"), "utf8"),
    ) as {
      exampleInput: JsonObject;
    };
    await expect(run("face_embedding_index", exampleInput)).rejects.toThrow(/no local face model/);
  });
});
