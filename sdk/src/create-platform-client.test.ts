import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerScriptService } from "../../gen/platform/script/v1/script_service_server.js";
import { ThreadSchema } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient } from "./index.js";

// The SDK against a real server built from the generated glue: credentials on every call,
// retries only where the contract marks a method idempotent, pagination from the contract's fields.
const seen: { authorization: string | null; organization: string | null }[] = [];
let getThreadFailures = 0;
let createThreadCalls = 0;
/** Called, once each, when the server starts the next (slow) GetScriptEnv. */
const slowEntered: (() => void)[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  const router = createServiceRouter();
  registerScriptService(router, {
    healthCheck: (_req, ctx) => {
      seen.push({
        authorization: ctx.requestHeader.get("authorization"),
        organization: ctx.requestHeader.get("x-organization-name"),
      });
      return { status: "ok", version: "test" };
    },
    getThread(req) {
      if (getThreadFailures > 0) {
        getThreadFailures--;
        throw new ConnectError("try again", Code.Unavailable);
      }
      return create(ThreadSchema, { threadId: req.threadId });
    },
    async getScriptEnv(_req, ctx) {
      slowEntered.splice(0).forEach((entered) => entered());
      // Slow on purpose, and stops when the caller's deadline or abort reaches the server.
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 5_000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
      return { vars: [] };
    },
    createThread() {
      createThreadCalls++;
      throw new ConnectError("try again", Code.Unavailable);
    },
    listThreads(req) {
      // Three pages of two threads each; the token is the next offset.
      const offset = req.pageToken === "" ? 0 : Number(req.pageToken);
      const threads = [offset, offset + 1].map((i) => create(ThreadSchema, { threadId: `t${i}` }));
      return { threads, nextPageToken: offset + 2 < 6 ? String(offset + 2) : "" };
    },
  });
  server = http.createServer(router.nodeHandler()).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe.each(["connect", "grpc-web"] as const)("createPlatformClient over %s", (protocol) => {
  const client = () =>
    createPlatformClient({
      apiUrl: url,
      token: "dk_test",
      organization: "acme",
      protocol,
      retry: { initialDelayMs: 1 },
    });

  it("sends the bearer token and the organization header", async () => {
    seen.length = 0;
    expect((await client().script.healthCheck({})).status).toBe("ok");
    expect(seen).toEqual([{ authorization: "Bearer dk_test", organization: "acme" }]);
  });

  it("retries an idempotent method after UNAVAILABLE", async () => {
    getThreadFailures = 2;
    expect((await client().script.getThread({ threadId: "t-9" })).threadId).toBe("t-9");
    expect(getThreadFailures).toBe(0);
  });

  it("gives up after the retry budget", async () => {
    getThreadFailures = 5;
    await expect(client().script.getThread({ threadId: "t-9" })).rejects.toMatchObject({ code: Code.Unavailable });
    expect(getThreadFailures).toBe(2); // one attempt and two retries
    getThreadFailures = 0;
  });

  it("never retries a method without an idempotency level", async () => {
    createThreadCalls = 0;
    await expect(client().script.createThread({ scriptName: "x" })).rejects.toMatchObject({ code: Code.Unavailable });
    expect(createThreadCalls).toBe(1);
  });

  it("ends a call at its per-call timeout", async () => {
    await expect(client().script.getScriptEnv({ name: "slow" }, { timeoutMs: 100 })).rejects.toMatchObject({
      code: Code.DeadlineExceeded,
    });
  });

  it("ends a call when its AbortSignal fires", async () => {
    const controller = new AbortController();
    // Aborted once the server runs the call, so it is cut in flight.
    slowEntered.push(() => controller.abort());
    await expect(client().script.getScriptEnv({ name: "slow" }, { signal: controller.signal })).rejects.toMatchObject({
      code: Code.Canceled,
    });
  });

  it("iterates every item across pages", async () => {
    const ids: string[] = [];
    for await (const thread of client().script.listThreadsAll({ pageSize: 2 })) ids.push(thread.threadId);
    expect(ids).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
  });
});
