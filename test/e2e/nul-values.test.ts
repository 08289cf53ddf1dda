import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus, type Thread } from "../../gen/platform/script/v1/thread_pb.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// Values holding U+0000 through the running binary, which PostgreSQL's jsonb and text cannot
// hold as such: what a tool returned, a thread's input and a resume override are stored and read
// back byte for byte, and the thread completes instead of failing with SQL in its error.
let acme: TestOrganization;
let target: Server;
let targetUrl: string;
/** The body the target answers: JSON whose string holds an escaped NUL. */
const BODY = '{"a":"x\\u0000y","b":"\\u0000"}';

beforeAll(async () => {
  acme = await createOrganization("nul");
  target = createServer((_request, response) =>
    response.writeHead(200, { "content-type": "application/json" }).end(BODY),
  );
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => target?.close(resolve));
});

async function settled(
  threadId: string,
  wanted = [ThreadStatus.COMPLETED, ThreadStatus.FAILED, ThreadStatus.CANCELLED],
): Promise<Thread> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const thread = await acme.client.script.getThread({ threadId });
    if (wanted.includes(thread.status)) return thread;
    if (Date.now() > deadline)
      throw new Error(`thread ${threadId} is still ${ThreadStatus[thread.status]}: ${thread.error}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

async function stepOutput(threadId: string, stepPath: string): Promise<string> {
  let output = "";
  for await (const chunk of acme.client.script.streamStepResult({ threadId, stepPath })) {
    if (chunk.chunk.case === "step") output = text(chunk.chunk.value.outputData);
  }
  return output;
}

describe("a value holding NUL", () => {
  it("that a tool returned is stored and read back byte for byte", async () => {
    await acme.client.script.createScript({
      name: "fetch-nul",
      source: `dsl: script/1
steps:
  - {id: fetch, execute: {tool: http.request, input: {url: "${targetUrl}/nul"}}}
output: "\${steps.fetch.output.body}"
`,
    });
    const { threadId } = await acme.client.script.createThread({ scriptName: "fetch-nul" });
    const thread = await settled(threadId);
    expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);

    const result = await acme.client.script.getThreadResult({ threadId, stepPath: "0" });
    expect(text(result.outputData)).toBe(BODY);
    expect(text(result.stepDetails[0]!.outputData)).toContain(`"body":${BODY}`);
    expect(await stepOutput(threadId, "0")).toContain(`"body":${BODY}`);
  });

  it("in a thread's input reaches its steps and its output", async () => {
    await acme.client.script.createScript({
      name: "echo-nul",
      source:
        'dsl: script/1\ninputs: {type: object, properties: {text: {type: string}}}\nsteps:\n  - {id: keep, set: {values: {text: "${inputs.text}"}}}\noutput: "${vars.text}"\n',
    });
    const { threadId } = await acme.client.script.createThread({
      scriptName: "echo-nul",
      inputJson: '{"text":"a\\u0000b"}',
    });
    expect((await settled(threadId)).status).toBe(ThreadStatus.COMPLETED);
    expect(text((await acme.client.script.getThreadResult({ threadId })).outputData)).toBe('"a\\u0000b"');
  });

  it("in a resume override is the step's input", async () => {
    await acme.client.script.createScript({
      name: "resume-nul",
      source: `dsl: script/1
steps:
  - {id: compute, execute: {tool: json.transform, input: {data: 1, expression: "data +"}}}
output: "\${steps.compute.output.result}"
`,
    });
    const { threadId } = await acme.client.script.createThread({ scriptName: "resume-nul" });
    expect((await settled(threadId)).status).toBe(ThreadStatus.FAILED);
    await acme.client.script.resumeThread({
      threadId,
      stepInputOverrideJson: '{"data":"x\\u0000y","expression":"data"}',
    });
    const thread = await settled(threadId, [ThreadStatus.COMPLETED, ThreadStatus.CANCELLED]);
    expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);
    expect(text((await acme.client.script.getThreadResult({ threadId })).outputData)).toBe('"x\\u0000y"');
    expect(await stepOutput(threadId, "0")).toBe('{"result":"x\\u0000y"}');
  });
});

it("reads a thread output that is a string of digits back as that string", async () => {
  await acme.client.script.createScript({
    name: "digits",
    source: 'dsl: script/1\nsteps:\n  - {id: keep, set: {values: {n: "123"}}}\noutput: "${vars.n}"\n',
  });
  const { threadId } = await acme.client.script.createThread({ scriptName: "digits" });
  expect((await settled(threadId)).status).toBe(ThreadStatus.COMPLETED);
  expect(text((await acme.client.script.getThreadResult({ threadId })).outputData)).toBe('"123"');
});
