import { once } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerSourceService } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { principalKey } from "../../auth/principal.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { createInternalSources } from "./internal-sources.js";
import { createSourceService } from "./source-handlers.js";

// The service on its HTTP routes, through the generated registration and the router every
// listener uses: paths, bodies, query casing and the error envelope as a caller sees them. The
// caller's organization comes from a test header in place of the auth interceptor.

let database: TestDatabase;
let server: http.Server;
let origin: string;
let orgId: string;

beforeAll(async () => {
  database = await openTestDatabase();
  orgId = await database.createOrganization();
  const asCaller: Interceptor = (next) => (request) => {
    const org = request.header.get("x-test-org");
    if (org)
      request.contextValues.set(principalKey, { orgId: org, orgName: "t", keyId: "k", roles: new Set(["admin"]) });
    return next(request);
  };
  const router = createServiceRouter({ interceptors: [asCaller] });
  registerSourceService(
    router,
    createSourceService({
      db: database.db,
      box: createSecretBox(new Uint8Array(randomBytes(32))),
      allowPrivateNetwork: false,
    }),
  );
  server = http.createServer(router.nodeHandler());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await database.close();
});

async function call(method: string, path: string, body?: unknown, org = orgId) {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { "x-test-org": org, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : {}) as Record<string, unknown>, text };
}

describe("source service HTTP routes", () => {
  it("creates and lists sources with every field written and every row returned", async () => {
    const internalId = await createInternalSources(database.db).ensureInternalSource(orgId, "docs");
    const created = await call("POST", "/docs/sources", {
      bucket: "ignored-in-favour-of-the-path",
      name: "handbook",
      provider: "PROVIDER_WEB",
      config: { urls: ["https://example.com/a"] },
    });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({
      sourceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      bucket: "docs",
      name: "handbook",
      description: "",
      provider: "PROVIDER_WEB",
      credentialId: "",
      config: { urls: ["https://example.com/a"] },
      internal: false,
      status: "SOURCE_STATUS_ACTIVE",
      errorMessage: "",
      createdAt: expect.stringMatching(/^[0-9]+$/),
      updatedAt: expect.stringMatching(/^[0-9]+$/),
    });
    await call("POST", "/docs/sources", { name: "second", provider: 13, config: { urls: ["https://example.com/b"] } });
    const listed = await call("GET", "/docs/sources?page_size=1");
    expect((listed.json.sources as { name: string }[]).map((s) => s.name)).toEqual(["internal", "handbook", "second"]);
    expect(listed.json.nextPageToken).toBe("");

    const deleting = await call("DELETE", `/docs/sources/${internalId}`);
    expect(deleting.status).toBe(400);
    expect(deleting.json).toMatchObject({ code: "failed_precondition" });
    const bad = await call("GET", "/docs/sources/not-a-uuid");
    expect([bad.status, bad.json.code, bad.json.message]).toEqual([
      400,
      "invalid_argument",
      "source_id must be a UUID",
    ]);
    const other = await call(
      "GET",
      `/docs/sources/${created.json.sourceId as string}`,
      undefined,
      await database.createOrganization(),
    );
    expect([other.status, other.json.code]).toEqual([404, "not_found"]);
  });

  it("stores credentials write-only and filters them by the query's enum number and source_id", async () => {
    const stored = await call("POST", "/admin/credentials", {
      name: "s3",
      provider: "PROVIDER_AMAZON_S3",
      accessKey: { accessKeyId: "AKIAROUTES", secretAccessKey: "route-secret" },
    });
    expect(stored.status).toBe(200);
    expect(stored.json).toMatchObject({ name: "s3", type: "CREDENTIAL_TYPE_ACCESS_KEY", expiresAt: "0", scopes: [] });
    expect(stored.text).not.toMatch(/AKIAROUTES|route-secret/);
    await call("POST", "/admin/credentials", { name: "gh", provider: "PROVIDER_GITHUB", token: "ghp_route" });

    const s3Only = await call("GET", "/admin/credentials?provider=2");
    expect((s3Only.json.credentials as { name: string }[]).map((c) => c.name)).toEqual(["s3"]);
    const everything = await call("GET", "/admin/credentials");
    expect(everything.json.credentials).toHaveLength(2);
    expect(everything.text).not.toMatch(/AKIAROUTES|route-secret|ghp_route/);
    const none = await call("GET", `/admin/credentials?source_id=${randomUUIDLike()}`);
    expect(none.json.credentials).toEqual([]);

    const id = stored.json.credentialId as string;
    expect((await call("DELETE", `/admin/credentials/${id}`)).status).toBe(200);
    expect((await call("DELETE", `/admin/credentials/${id}`)).status).toBe(404);
  });

  it("answers OAuth requests for an unconfigured provider with the field named", async () => {
    const answer = await call("GET", "/admin/oauth/url?provider=5&redirect_uri=https%3A%2F%2Fapp.example%2Fcb");
    expect([answer.status, answer.json.code]).toEqual([400, "failed_precondition"]);
    expect(answer.json.message).toMatch(/^provider: OAuth for PROVIDER_GOOGLE_DRIVE is not configured/);
  });
});

function randomUUIDLike(): string {
  const hex = randomBytes(16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}
