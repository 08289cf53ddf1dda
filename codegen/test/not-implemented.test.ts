import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdentityAdminHandler } from "../../gen/openapi/identity-admin/handler.js";
import { createScriptServiceClient } from "../../gen/platform/script/v1/script_service_client.js";
import { registerScriptService } from "../../gen/platform/script/v1/script_service_server.js";
import { createServiceRouter } from "../runtime/server/index.js";
import { NOT_IMPLEMENTED_DOC } from "../src/not-implemented.js";
import { createGoldenPlaneHandler } from "./golden/openapi/golden-plane/handler.js";

// A method a partial implementation leaves out answers the same on both kinds of generated code:
// UNIMPLEMENTED as the RPC wire rules give it, HTTP 501 with code `unimplemented`, in the shape
// of the plane's errors.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const servers: Server[] = [];
let rpcUrl: string;
let adminUrl: string;
let goldenUrl: string;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const router = createServiceRouter();
  registerScriptService(router, { healthCheck: () => ({ status: "ok", version: "test" }) });
  rpcUrl = await listen(router.nodeHandler());
  adminUrl = await listen(createIdentityAdminHandler({}).nodeHandler());
  goldenUrl = await listen(createGoldenPlaneHandler({}).nodeHandler());
});
afterAll(() => servers.forEach((s) => s.close()));

describe("a method the implementation leaves out", () => {
  it("on an RPC service's HTTP route: 501 with code unimplemented", async () => {
    const answer = await fetch(`${rpcUrl}/v1/script/env`);
    expect(answer.status).toBe(501);
    expect(await answer.json()).toMatchObject({ code: "unimplemented" });
  });

  it("on an RPC service over Connect: UNIMPLEMENTED, which Connect sends as HTTP 501", async () => {
    const client = createScriptServiceClient(createConnectTransport({ baseUrl: rpcUrl, httpVersion: "1.1" }), {
      retry: false,
    });
    await expect(client.listEnvVars({})).rejects.toMatchObject({ code: Code.Unimplemented });
    const answer = await fetch(`${rpcUrl}/platform.script.v1.ScriptService/ListEnvVars`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect([answer.status, ((await answer.json()) as { code: string }).code]).toEqual([501, "unimplemented"]);
  });

  it("on a REST plane whose errors are {code, message}: the same 501 and code", async () => {
    const answer = await fetch(`${adminUrl}/v1/identity/pools`);
    expect(answer.status).toBe(501);
    expect(await answer.json()).toEqual({ code: "unimplemented", message: "listPools is not implemented" });
  });

  it("on a REST plane whose errors are {error}: the same 501, in the plane's shape", async () => {
    const answer = await fetch(`${goldenUrl}/demo/widgets/w-1`);
    expect(answer.status).toBe(501);
    expect(await answer.json()).toEqual({ error: "getWidget is not implemented" });
  });

  it("is documented with the same words by both generators", async () => {
    const server = await readFile(join(root, "gen/platform/script/v1/script_service_server.ts"), "utf8");
    const handler = await readFile(join(root, "gen/openapi/identity-admin/handler.ts"), "utf8");
    expect(server).toContain(NOT_IMPLEMENTED_DOC);
    expect(handler).toContain(NOT_IMPLEMENTED_DOC);
  });
});
