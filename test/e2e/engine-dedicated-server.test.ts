import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus, type Thread } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// The engine through a server of its own: one worker slot (--thread-concurrency 1), and the
// llm.complete tool pointed (--llm-base-url) at an OpenAI-compatible endpoint on loopback.
let server: StartedServer;
let model: Server;
let target: Server;
let targetUrl: string;
/** Requests the HTTP target received, by path; it drops every connection (a retryable failure). */
const hits = new Map<string, number>();
let client: PlatformClient;
/** Bodies of the chat completion requests the model received. */
const asked: { model: string; messages: { content: string }[] }[] = [];
/** The branch the model names next; it changes its mind after the first answer. */
const answers = [
  '{"branch": "escalate", "reasoning": "the customer is angry"}',
  '{"branch": "archive", "reasoning": "on second thought"}',
];

beforeAll(async () => {
  model = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      asked.push(JSON.parse(body) as (typeof asked)[number]);
      const content = answers.length > 1 ? answers.shift()! : answers[0]!;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          model: "served",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
  target = createServer((request) => {
    hits.set(request.url ?? "", (hits.get(request.url ?? "") ?? 0) + 1);
    request.socket.destroy();
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startPlatformServer([
    "--llm-base-url",
    modelUrl,
    "--llm-model",
    "house-model",
    "--thread-concurrency",
    "1",
    "--allow-private-network=true",
  ]);
  const created = await runAdmin(server.dataDir, ["create-org", "llmco"]);
  const { apiKey } = created.json as { apiKey: string };
  client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "llmco" });
});
afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => model?.close(resolve));
  await new Promise((resolve) => target?.close(resolve));
});

async function finished(threadId: string): Promise<Thread> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const thread = await client.script.getThread({ threadId });
    if ([ThreadStatus.COMPLETED, ThreadStatus.FAILED, ThreadStatus.CANCELLED].includes(thread.status)) return thread;
    if (Date.now() > deadline) throw new Error(`thread ${threadId} is still ${ThreadStatus[thread.status]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} never happened`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("a retry's backoff", () => {
  it("leaves the only worker slot to another thread, and the attempts go on where they were", async () => {
    await client.script.createScript({
      name: "backs-off",
      source: `dsl: script/1
steps:
  - {id: call, retry: {maxAttempts: 3, backoff: fixed, initial: 5s}, execute: {tool: http.request, input: {url: "${targetUrl}/down/backs-off"}}}
`,
    });
    await client.script.createScript({
      name: "quick",
      source: "dsl: script/1\nsteps:\n  - {id: one, set: {values: {x: 1}}}\n",
    });
    const backingOff = (await client.script.createThread({ scriptName: "backs-off" })).threadId;
    await until(
      async () => hits.get("/down/backs-off") ?? 0,
      (count) => count === 1,
      "the first attempt",
    );

    const quick = (await client.script.createThread({ scriptName: "quick" })).threadId;
    expect((await finished(quick)).status).toBe(ThreadStatus.COMPLETED);
    // The other thread ran during the first backoff: no second attempt yet, still running.
    expect(hits.get("/down/backs-off")).toBe(1);
    expect((await client.script.getThread({ threadId: backingOff })).status).toBe(ThreadStatus.RUNNING);

    const failed = await finished(backingOff);
    expect(failed.status).toBe(ThreadStatus.FAILED);
    expect(failed.error).toMatch(/^http\.request: .* failed: /);
    expect(hits.get("/down/backs-off")).toBe(3);
  });
});

it("asks the model once, takes the branch it chose, and keeps that decision when the thread replays", async () => {
  await client.script.createScript({
    name: "triage",
    source: `dsl: script/1
inputs: {type: object, properties: {message: {type: string}}}
steps:
  - id: route
    decide:
      strategy: llm
      prompt: "Route this message: \${inputs.message}"
      branches:
        - name: escalate
          description: "a person must answer now"
          steps:
            - {id: settle, wait: {for: 200ms}}
            - {id: page, set: {values: {paged: true}}}
        - {name: archive, default: true, description: "nothing to do"}
output: {route: "\${steps.route.output.chosen_branch}", why: "\${steps.route.output.reasoning}", paged: "\${vars.paged}"}
`,
  });
  const { threadId } = await client.script.createThread({
    scriptName: "triage",
    inputJson: JSON.stringify({ message: "this is the third time I write" }),
  });
  const thread = await finished(threadId);
  expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);

  const result = await client.script.getThreadResult({ threadId, stepPath: "0" });
  expect(JSON.parse(new TextDecoder().decode(result.outputData))).toEqual({
    route: "escalate",
    why: "the customer is angry",
    paged: true,
  });
  expect(asked).toHaveLength(1);
  expect(asked[0]!.model).toBe("house-model");
  expect(asked[0]!.messages[0]!.content).toContain("Route this message: this is the third time I write");
  const decide = result.stepDetails.find((step) => step.stepPath === "0")!;
  expect(decide.tool).toBe("llm.complete");
  expect(JSON.parse(new TextDecoder().decode(decide.inputData))).toEqual({
    decision: { strategy: "llm", chosen_branch: "escalate", reasoning: "the customer is angry" },
  });
});
