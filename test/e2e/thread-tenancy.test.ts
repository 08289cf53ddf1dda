import { Code, ConnectError } from "@connectrpc/connect";
import { request } from "undici";
import { beforeAll, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// Every method that reads a thread by its id answers NOT_FOUND to another organization, with
// nothing of the thread (its steps, events, output or yielded values) in the answer.
let owner: TestOrganization;
let outsider: TestOrganization;
let threadId: string;

beforeAll(async () => {
  [owner, outsider] = await Promise.all([createOrganization("tenant"), createOrganization("outsider")]);
  await owner.client.script.createScript({
    name: "private",
    source:
      'dsl: script/1\nsteps:\n  - {id: note, yield: {value: "owner-only-yield"}}\n  - {id: keep, set: {values: {v: "owner-only-output"}}}\n',
  });
  ({ threadId } = await owner.client.script.createThread({ scriptName: "private" }));
  const deadline = Date.now() + 30_000;
  while ((await owner.client.script.getThread({ threadId })).status !== ThreadStatus.COMPLETED) {
    if (Date.now() > deadline) throw new Error("the thread did not complete");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

async function refused(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ConnectError);
  expect((error as ConnectError).code).toBe(Code.NotFound);
  expect((error as ConnectError).rawMessage).not.toMatch(/owner-only/);
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const messages: unknown[] = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

it("answers NOT_FOUND to another organization on every method keyed by the thread id", async () => {
  const script = outsider.client.script;
  // The owner sees it all: the check below is about the organization, not the thread.
  expect((await owner.client.script.getThreadResult({ threadId })).totalYielded).toBe(1);

  await refused(() => script.getThread({ threadId }));
  await refused(() => script.getThreadResult({ threadId }));
  await refused(() => script.getThreadResult({ threadId, stepPath: "1" }));
  await refused(() => drain(script.watchThread({ threadId })));
  await refused(() => drain(script.watchStep({ threadId, stepPath: "0" })));
  await refused(() => drain(script.streamThreadResult({ threadId })));
  await refused(() => drain(script.streamStepResult({ threadId })));
  await refused(() => script.listArtifacts({ threadId }));
  await refused(() => script.resumeThread({ threadId }));
  await refused(() => script.cancelThread({ threadId }));

  for (const path of ["", "/result", "/result/stream", "/steps/stream", "/watch", "/steps/0/watch"]) {
    const response = await request(`${apiUrl()}/v1/script/threads/${threadId}${path}`, { headers: outsider.headers });
    const body = await response.body.text();
    expect([path, response.statusCode]).toEqual([path, 404]);
    expect(body).not.toMatch(/owner-only/);
  }
});
