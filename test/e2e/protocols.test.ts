import { Code } from "@connectrpc/connect";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { createScriptServiceClient } from "../../gen/platform/script/v1/script_service_client.js";
import { createSecretServiceClient } from "../../gen/platform/compute/v1/secret_service_client.js";
import { apiUrl, rpcTransports, createOrganization, type TestOrganization } from "./shared-server.js";

// The running binary answers one port over Connect (JSON and binary), gRPC (h2c), gRPC-web and
// plain HTTP/JSON, with the same handler behind each.
let acme: TestOrganization;
beforeAll(async () => {
  acme = await createOrganization("proto");
});

const transports = rpcTransports(() => acme);

describe.each(transports)("%s", (_name, transport) => {
  it("calls the public health check and an authenticated method", async () => {
    const script = createScriptServiceClient(transport());
    expect((await script.healthCheck({})).status).toBe("ok");
    await script.setEnvVar({ key: "PROTOCOL", value: _name });
    expect((await script.getEnvVar({ key: "PROTOCOL" })).value).toBe(_name);
  });

  it("carries errors with their codes", async () => {
    const secrets = createSecretServiceClient(transport(), { retry: false });
    await expect(secrets.getSecret({ name: "absent" })).rejects.toMatchObject({ code: Code.NotFound });
    await expect(secrets.createSecret({ name: "bad name!" })).rejects.toMatchObject({ code: Code.InvalidArgument });
  });
});

describe("plain HTTP on the same port", () => {
  it("writes camelCase JSON with int64 as strings", async () => {
    const response = await request(`${apiUrl()}/v1/script/health`);
    const body = (await response.body.json()) as Record<string, unknown>;
    expect(response.statusCode).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["status", "uptimeSeconds", "version"]);
    expect(typeof body.uptimeSeconds).toBe("string");
  });

  it("answers /healthz and /readyz without credentials", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const response = await request(`${apiUrl()}${path}`);
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    }
  });

  it("answers 404 for an unknown path and 405 with Allow for a known path", async () => {
    const missing = await request(`${apiUrl()}/v1/nothing-here`);
    expect([missing.statusCode, ((await missing.body.json()) as { code: string }).code]).toEqual([404, "not_found"]);
    const wrong = await request(`${apiUrl()}/v1/script/health`, { method: "POST" });
    expect([wrong.statusCode, wrong.headers.allow]).toEqual([405, "GET"]);
    await wrong.body.dump();
  });

  it("refuses a body over the limit with 413 before reading it", async () => {
    // Only the head is sent: the answer must come before any of the announced 17 MiB.
    const { Socket } = await import("node:net");
    const url = new URL(apiUrl());
    const statusLine = await new Promise<string>((resolve, reject) => {
      const socket = new Socket();
      let data = "";
      socket.connect(Number(url.port), url.hostname, () =>
        socket.write(
          `POST /v1/script/env/import HTTP/1.1\r\nHost: x\r\nauthorization: ${acme.headers.authorization}\r\n` +
            `content-type: application/json\r\ncontent-length: ${17 * 1024 * 1024}\r\n\r\n`,
        ),
      );
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        data += chunk;
        if (data.includes("\r\n")) {
          socket.destroy();
          resolve(data.split("\r\n")[0]!);
        }
      });
      socket.on("error", reject);
    });
    expect(statusLine).toBe("HTTP/1.1 413 Payload Too Large");
  });

  it("answers a browser's CORS preflight for an allowed origin, and not for another", async () => {
    const allowed = await request(`${apiUrl()}/platform.script.v1.ScriptService/ListEnvVars`, {
      method: "OPTIONS",
      headers: {
        origin: "http://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,authorization,x-organization-name,connect-protocol-version",
      },
    });
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers["access-control-allow-origin"]).toBe("http://app.example");
    expect(String(allowed.headers["access-control-allow-headers"])).toMatch(/authorization/i);
    const denied = await request(`${apiUrl()}/platform.script.v1.ScriptService/ListEnvVars`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("echoes a request id", async () => {
    const response = await request(`${apiUrl()}/v1/script/health`, { headers: { "x-request-id": "trace-123" } });
    expect(response.headers["x-request-id"]).toBe("trace-123");
    await response.body.dump();
  });
});
