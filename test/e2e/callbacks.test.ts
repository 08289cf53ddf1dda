import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { Webhook } from "standardwebhooks";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// callback_url through the running binary: a real HTTP receiver gets the final thread, signed so
// that the Standard Webhooks reference verifier accepts it with the organization's key.
interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

let acme: TestOrganization;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Status codes the receiver answers with, in order; 204 once they run out. */
const answers: number[] = [];

beforeAll(async () => {
  acme = await createOrganization("callbacks");
  await acme.client.script.createScript({
    name: "quick",
    source: 'dsl: script/1\nsteps:\n  - {id: one, set: {values: {x: 1}}}\noutput: {x: "${vars.x}"}\n',
  });
  await acme.client.script.createScript({
    name: "broken",
    source:
      'dsl: script/1\nsteps:\n  - {id: bad, execute: {tool: json.transform, input: {data: 1, expression: "data.missing"}}}\n',
  });
  await acme.client.script.createScript({
    name: "slow",
    source: "dsl: script/1\nsteps:\n  - {id: nap, execute: {tool: sleep, input: {duration: 30s}}}\n",
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(answers.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

async function deliveryTo(path: string, count = 1): Promise<Received[]> {
  for (let i = 0; i < 300; i++) {
    const matching = received.filter((r) => r.path === path);
    if (matching.length >= count) return matching;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no callback reached ${path}`);
}

async function verified(
  delivery: Received,
): Promise<{ type: string; timestamp: string; data: Record<string, unknown> }> {
  const { key } = await acme.client.script.getCallbackSigningKey({});
  return new Webhook(key).verify(delivery.body, delivery.headers) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };
}

describe("thread callbacks", () => {
  it("posts a completed thread's final state, signed with the organization's key", async () => {
    const { threadId } = await acme.client.script.createThread({
      scriptName: "quick",
      callbackUrl: `${receiverUrl}/done?source=e2e`,
      metadata: { order: "42" },
    });
    const [delivery] = await deliveryTo("/done?source=e2e");
    expect(delivery!.headers["content-type"]).toBe("application/json");
    const payload = await verified(delivery!);
    expect(payload.type).toBe("thread.completed");
    expect(payload.data).toMatchObject({
      threadId,
      status: "THREAD_STATUS_COMPLETED",
      scriptName: "quick",
      metadata: { order: "42" },
      organizationName: acme.name,
    });
    // The callback carries what GetThread answers at the end.
    const thread = await acme.client.script.getThread({ threadId });
    expect(payload.data.finishedAtMs).toBe(String(thread.finishedAtMs));
  });

  it("retries a failed delivery with the same id and body", async () => {
    answers.push(503);
    await acme.client.script.createThread({ scriptName: "broken", callbackUrl: `${receiverUrl}/retry` });
    const [first, second] = await deliveryTo("/retry", 2);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body).toBe(first!.body);
    expect((await verified(second!)).type).toBe("thread.failed");
  }, 30_000);

  it("posts a cancelled thread, and signs with both keys during a rotation", async () => {
    const before = await acme.client.script.getCallbackSigningKey({});
    const rotated = await acme.client.script.rotateCallbackSigningKey({});
    expect(rotated.key).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.key).not.toBe(before.key);
    expect(Number(rotated.previousKeyExpiresAtMs)).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const { threadId } = await acme.client.script.createThread({
      scriptName: "slow",
      callbackUrl: `${receiverUrl}/cancelled`,
    });
    await acme.client.script.cancelThread({ threadId, reason: "changed my mind" });
    const [delivery] = await deliveryTo("/cancelled");
    expect(delivery!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const key of [before.key, rotated.key]) {
      const payload = new Webhook(key).verify(delivery!.body, delivery!.headers) as {
        type: string;
        data: { threadId: string };
      };
      expect(payload).toMatchObject({ type: "thread.cancelled", data: { threadId } });
    }
  });

  it("keeps the signing key from readers without the write role, over plain HTTP too", async () => {
    const response = await request(`${apiUrl()}/v1/script/callback-signing-key`, { headers: acme.headers });
    expect(response.statusCode).toBe(200);
    const body = (await response.body.json()) as { key: string; createdAtMs: string };
    expect(body.key).toMatch(/^whsec_/);
    expect(body.createdAtMs).toMatch(/^\d+$/);

    const viewer = await acme.client.iam.createApiKey({ orgId: acme.id, name: "viewer", roles: ["script.viewer"] });
    const asViewer = await request(`${apiUrl()}/v1/script/callback-signing-key`, {
      headers: { ...acme.headers, authorization: `Bearer ${viewer.secret}` },
    });
    expect(asViewer.statusCode).toBe(403);
    await asViewer.body.dump();
  });

  it("refuses a callback URL the server will not call, naming the field", async () => {
    const error = await acme.client.script
      .createThread({ scriptName: "quick", callbackUrl: "ftp://example.com/x" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: Code.InvalidArgument });
    expect(String((error as Error).message)).toMatch(/callback_url/);
  });
});
