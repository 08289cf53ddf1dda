import { Code } from "@connectrpc/connect";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { parseSse } from "../../codegen/runtime/stream-framing/sse.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// Threads through the running binary: a script with decide, iterate and yield runs to the end,
// its events arrive in order over Connect and over server-sent events; results, cancel, resume
// and tenancy behave as the contract says.
let acme: TestOrganization;
let other: TestOrganization;

const script = `dsl: script/1
description: Doubles numbers and says whether there were many.
inputs:
  type: object
  required: [numbers]
  properties:
    numbers: {type: array, items: {type: integer}}
steps:
  - id: route
    decide:
      branches:
        - {name: many, when: "size(inputs.numbers) > 2", steps: [{id: note_many, set: {values: {size: many}}}]}
        - {name: few, default: true, steps: [{id: note_few, set: {values: {size: few}}}]}
  - id: each
    iterate:
      over: inputs.numbers
      as: n
      maxConcurrency: 2
      steps:
        - {id: double, execute: {tool: json.transform, input: {data: "\${n}", expression: "data * 2"}}}
  - id: report
    yield: {value: {done: "\${size(steps.each.output)}"}}
  - id: render
    execute: {tool: template.render, input: {template: "{{ size }} numbers", values: {size: "\${steps.route.output.chosen_branch}"}}}
output: {text: "\${steps.render.output.text}", doubled: "\${steps.each.output.map(r, r.result)}"}
`;

beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("threads"), createOrganization("outsider")]);
  await acme.client.script.createScript({ name: "doubler", source: script });
  await acme.client.script.createScript({
    name: "sleepy",
    source:
      "dsl: script/1\nsteps:\n  - {id: nap, execute: {tool: sleep, input: {duration: 2s}}}\n  - {id: after, set: {values: {x: 1}}}\n",
  });
  await acme.client.script.createScript({
    name: "fragile",
    source: `dsl: script/1
inputs: {type: object, properties: {expression: {type: string}}}
steps:
  - {id: compute, execute: {tool: json.transform, input: {data: 21, expression: "\${inputs.expression}"}}}
output: "\${steps.compute.output.result}"
`,
  });
});

async function waitForStatus(threadId: string, wanted: ThreadStatus[]) {
  for (let i = 0; i < 400; i++) {
    const thread = await acme.client.script.getThread({ threadId });
    if (wanted.includes(thread.status)) return thread;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`thread ${threadId} never reached ${wanted.join(", ")}`);
}

describe("a thread", () => {
  it("runs to completion with every event in order over Connect", async () => {
    const { threadId, status } = await acme.client.script.createThread({
      scriptName: "doubler",
      inputJson: JSON.stringify({ numbers: [1, 2, 3] }),
      metadata: { team: "e2e" },
    });
    expect(status).toBe(ThreadStatus.PENDING);
    const kinds: string[] = [];
    for await (const event of acme.client.script.watchThread({ threadId })) kinds.push(event.event.case ?? "");
    expect(kinds[0]).toBe("started");
    expect(kinds.at(-1)).toBe("completed");
    expect(kinds).toContain("yielded");
    expect(kinds.filter((k) => k === "stepCompleted").length).toBeGreaterThanOrEqual(8);

    const thread = await acme.client.script.getThread({ threadId });
    expect(thread).toMatchObject({
      status: ThreadStatus.COMPLETED,
      scriptName: "doubler",
      scriptVersion: 1,
      metadata: { team: "e2e" },
      organizationName: acme.name,
    });
    const result = await acme.client.script.getThreadResult({ threadId });
    expect(JSON.parse(new TextDecoder().decode(result.outputData))).toEqual({
      text: "many numbers",
      doubled: [2, 4, 6],
    });
    expect(result.totalYielded).toBe(1);
  });

  it("completes with warnings when its output does not match outputs, in GetThread and GetThreadResult", async () => {
    await acme.client.script.createScript({
      name: "loose",
      source:
        'dsl: script/1\noutputs: {type: object, required: [count], properties: {count: {type: integer}}}\nsteps: [{id: s, set: {values: {n: many}}}]\noutput: {count: "${steps.s.output.n}"}\n',
    });
    const { threadId } = await acme.client.script.createThread({ scriptName: "loose" });
    const thread = await waitForStatus(threadId, [ThreadStatus.COMPLETED, ThreadStatus.FAILED]);
    expect(thread).toMatchObject({
      status: ThreadStatus.COMPLETED,
      error: "",
      warnings: ["output/count: must be integer"],
    });
    expect((await acme.client.script.getThreadResult({ threadId, metadataOnly: true })).warnings).toEqual([
      "output/count: must be integer",
    ]);
    const response = await request(`${apiUrl()}/v1/script/threads/${threadId}`, { headers: acme.headers });
    expect(((await response.body.json()) as { warnings: string[] }).warnings).toEqual([
      "output/count: must be integer",
    ]);
  });

  it("streams the same events as server-sent events to a plain HTTP client", async () => {
    const { threadId } = await acme.client.script.createThread({ scriptName: "doubler", inputJson: '{"numbers":[5]}' });
    const response = await request(`${apiUrl()}/v1/script/threads/${threadId}/watch`, { headers: acme.headers });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const events: Record<string, unknown>[] = [];
    for await (const event of parseSse(response.body)) events.push(JSON.parse(event.data) as Record<string, unknown>);
    expect(Object.keys(events[0]!)).toContain("started");
    expect(events.at(-1)).toHaveProperty("completed");
    expect(events.every((e) => e.threadId === threadId && typeof e.timestampMs === "string")).toBe(true);
    const result = await request(`${apiUrl()}/v1/script/threads/${threadId}/result`, { headers: acme.headers });
    const body = (await result.body.json()) as { status: string; outputData: string };
    expect(body.status).toBe("THREAD_STATUS_COMPLETED");
    expect(JSON.parse(Buffer.from(body.outputData, "base64").toString())).toEqual({
      text: "few numbers",
      doubled: [10],
    });
  });

  it("rejects bad input naming the field, and hides other organizations' threads", async () => {
    await expect(
      acme.client.script.createThread({ scriptName: "doubler", inputJson: '{"numbers":"nope"}' }),
    ).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/input_json\/numbers/),
    });
    await expect(
      acme.client.script.createThread({ scriptName: "doubler", inputJson: "{not json" }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(acme.client.script.createThread({ scriptName: "missing" })).rejects.toMatchObject({
      code: Code.NotFound,
    });
    const { threadId } = await acme.client.script.createThread({ scriptName: "doubler", inputJson: '{"numbers":[]}' });
    await expect(other.client.script.getThread({ threadId })).rejects.toMatchObject({ code: Code.NotFound });
    const response = await request(`${apiUrl()}/v1/script/threads/${threadId}`, { headers: other.headers });
    expect(response.statusCode).toBe(404);
    await response.body.dump();
  });

  it("is cancelled cooperatively: the running step finishes, no further step starts", async () => {
    const { threadId } = await acme.client.script.createThread({ scriptName: "sleepy" });
    // Cancel once the first step has started (a thread cancelled before it starts runs no step).
    for (let i = 0; (await acme.client.script.getThread({ threadId })).currentStepPath !== "0"; i++) {
      if (i > 200) throw new Error("the first step never started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await acme.client.script.cancelThread({ threadId, reason: "no longer needed" });
    const cancelled = await waitForStatus(threadId, [ThreadStatus.CANCELLED]);
    expect(cancelled.status).toBe(ThreadStatus.CANCELLED);
    const result = await acme.client.script.getThreadResult({ threadId });
    expect(result.steps.map((s) => s.stepPath)).toEqual(["0"]);
  });

  it("fails on a bad step and resumes it with an override input", async () => {
    const { threadId } = await acme.client.script.createThread({
      scriptName: "fragile",
      inputJson: '{"expression":"data +"}',
    });
    const failed = await waitForStatus(threadId, [ThreadStatus.FAILED]);
    expect(failed.error).not.toBe("");
    await acme.client.script.resumeThread({
      threadId,
      stepInputOverrideJson: JSON.stringify({ data: 21, expression: "data * 2" }),
    });
    await waitForStatus(threadId, [ThreadStatus.COMPLETED]);
    const result = await acme.client.script.getThreadResult({ threadId });
    expect(JSON.parse(new TextDecoder().decode(result.outputData))).toBe(42);
  });
});

describe("timeouts and step watches", () => {
  it("fails a thread that outlives its timeout", async () => {
    const { threadId } = await acme.client.script.createThread({ scriptName: "sleepy", timeout: "1s" });
    const failed = await waitForStatus(threadId, [ThreadStatus.FAILED, ThreadStatus.COMPLETED]);
    expect(failed.status).toBe(ThreadStatus.FAILED);
    expect(failed.error).toMatch(/timed out/);
  });

  it("streams one step's snapshot, decision and end as server-sent events", async () => {
    const { threadId } = await acme.client.script.createThread({
      scriptName: "doubler",
      inputJson: '{"numbers":[1,2,3,4]}',
    });
    await waitForStatus(threadId, [ThreadStatus.COMPLETED]);
    const response = await request(`${apiUrl()}/v1/script/threads/${threadId}/steps/0/watch`, {
      headers: acme.headers,
    });
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const events: Record<string, unknown>[] = [];
    for await (const event of parseSse(response.body)) events.push(JSON.parse(event.data) as Record<string, unknown>);
    expect(events[0]).toMatchObject({
      threadId,
      stepPath: "0",
      snapshot: { status: "STEP_STATUS_COMPLETED", name: "route", primitive: "decide" },
    });
  });
});
