import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus, type Thread } from "../../gen/platform/script/v1/thread_pb.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// Replays and retries through the running binary. A `wait` step releases the thread; when it is
// claimed again the interpreter runs the document from the top, binding what the database says
// already happened, so everything a later step reads must come back from the record. Retries
// are counted at a loopback HTTP server the script calls.
let acme: TestOrganization;
let target: Server;
let targetUrl: string;
/** Requests the target received, by path. */
const hits = new Map<string, number>();

beforeAll(async () => {
  acme = await createOrganization("replay");
  // `/down/...` drops the connection (http.request reports the target unavailable, which is
  // retried); anything else answers its path.
  target = createServer((request, response) => {
    const path = request.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path.startsWith("/down/")) return void request.socket.destroy();
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path }));
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => target?.close(resolve));
});

const TERMINAL = [ThreadStatus.COMPLETED, ThreadStatus.FAILED, ThreadStatus.CANCELLED];

async function finished(threadId: string): Promise<Thread> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const thread = await acme.client.script.getThread({ threadId });
    if (TERMINAL.includes(thread.status)) return thread;
    if (Date.now() > deadline) throw new Error(`thread ${threadId} is still ${ThreadStatus[thread.status]}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function run(name: string, source: string): Promise<{ thread: Thread; output: unknown }> {
  await acme.client.script.createScript({ name, source });
  const { threadId } = await acme.client.script.createThread({ scriptName: name });
  const thread = await finished(threadId);
  const result = await acme.client.script.getThreadResult({ threadId });
  const text = new TextDecoder().decode(result.outputData);
  return { thread, output: text === "" ? undefined : JSON.parse(text) };
}

describe("a thread replayed after a wait", () => {
  it("binds again the variables, the branch steps and the calls that completed before it", async () => {
    const { thread, output } = await run(
      "replayed",
      `dsl: script/1
steps:
  - {id: remember, set: {values: {greeting: hello}}}
  - id: route
    decide:
      branches:
        - {name: only, default: true, steps: [{id: mark, set: {values: {size: big}}}]}
  - {id: fetch, execute: {tool: http.request, input: {url: "${targetUrl}/once/replayed"}}}
  - {id: nap, wait: {for: 200ms}}
output: {said: "\${vars.greeting}", size: "\${vars.size}", fetched: "\${steps.fetch.output.body.path}"}
`,
    );
    expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);
    expect(output).toEqual({ said: "hello", size: "big", fetched: "/once/replayed" });
    expect(hits.get("/once/replayed")).toBe(1);
  });
});

describe("a retried call", () => {
  it("is attempted maxAttempts times in all, then fails the thread with the last error", async () => {
    const { thread } = await run(
      "retried",
      `dsl: script/1
steps:
  - id: call
    retry: {maxAttempts: 3, backoff: fixed, initial: 50ms}
    execute: {tool: http.request, input: {url: "${targetUrl}/down/retried"}}
`,
    );
    expect(thread.status).toBe(ThreadStatus.FAILED);
    expect(thread.error).toMatch(/^http\.request: .* failed: /);
    expect(hits.get("/down/retried")).toBe(3);
  });
});
