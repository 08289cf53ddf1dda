import * as http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIamServiceClient } from "../../gen/platform/iam/v1/iam_service_client.js";
import { createScriptServiceClient } from "../../gen/platform/script/v1/script_service_client.js";
import { ListThreadsRequestSchema } from "../../gen/platform/script/v1/script_service_pb.js";
import postgres from "postgres";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";
import {
  apiUrl,
  rpcTransports,
  callIdentityAdmin,
  createOrganization,
  identityUrl,
  type TestOrganization,
} from "./shared-server.js";

// What a caller can learn from an error, on every protocol: a deliberate error names the field
// and says what is wrong; nothing else ever carries SQL, bound parameters or environment values.

let acme: TestOrganization;
const ENV_VALUE = "env-value-that-must-never-leak-7f3a";

beforeAll(async () => {
  acme = await createOrganization("edge");
  await acme.client.script.setEnvVar({ key: "DEPLOY_TOKEN", value: ENV_VALUE });
});

const transports = rpcTransports(() => acme);

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );
  if (!outcome) throw new Error("the call succeeded");
  return outcome;
}

describe.each(transports)("NUL characters over %s", (_name, transport) => {
  it("are refused as invalid_argument naming the field, in a filter, an IAM filter and a key name", async () => {
    const script = createScriptServiceClient(transport(), { retry: false });
    const iam = createIamServiceClient(transport(), { retry: false });
    const cases: [() => Promise<unknown>, string][] = [
      [() => script.listThreads({ scriptNameFilter: "a\0b" }), "script_name_filter"],
      [() => iam.listPermissions({ orgId: acme.id, principal: "p\0" }), "principal"],
      [() => iam.listPermissions({ orgId: acme.id, role: "\0" }), "role"],
      [() => iam.listPermissions({ orgId: acme.id, resource: "x\0y" }), "resource"],
      [() => iam.createApiKey({ orgId: acme.id, name: "key\0name" }), "name"],
      [() => script.updateScriptEnv({ name: "s", set: { "K\0": "v" } }), 'set["K\\\\0"]'],
    ];
    for (const [call, field] of cases) {
      const error = await failure(call());
      expect([error.code, error.rawMessage]).toEqual([
        Code.InvalidArgument,
        `${field}: must not contain the NUL character (U+0000)`,
      ]);
    }
  });
});

describe("NUL characters over the HTTP routes", () => {
  it("are refused as 400 naming the field, in the query and in the body", async () => {
    const query = await fetch(`${apiUrl()}/v1/script/threads?scriptNameFilter=a%00b`, { headers: acme.headers });
    expect([query.status, await query.json()]).toEqual([
      400,
      { code: "invalid_argument", message: "script_name_filter: must not contain the NUL character (U+0000)" },
    ]);
    const body = await fetch(`${apiUrl()}/v1/script/env`, {
      method: "PUT",
      headers: { ...acme.headers, "content-type": "application/json" },
      body: JSON.stringify({ key: "K", value: "v\0" }),
    });
    expect([body.status, await body.json()]).toEqual([
      400,
      { code: "invalid_argument", message: "value: must not contain the NUL character (U+0000)" },
    ]);
  });

  it("in a thread's input never answers with SQL or the organization's environment", async () => {
    await acme.client.script.createScript({
      name: "nul-input",
      source: "dsl: script/1\nsteps:\n  - id: echo\n    set: {values: {a: '${inputs.a}'}}\n",
    });
    const response = await fetch(`${apiUrl()}/v1/script/threads`, {
      method: "POST",
      headers: { ...acme.headers, "content-type": "application/json" },
      body: JSON.stringify({ scriptName: "nul-input", loadEnv: true, inputJson: JSON.stringify({ a: "x\0y" }) }),
    });
    const text = await response.text();
    expect(response.status).toBeLessThan(500);
    expect(text).not.toContain(ENV_VALUE);
    expect(text).not.toMatch(/insert into|params:|Failed query/i);
  });
});

describe("NUL characters on the identity planes", () => {
  it("are refused as 400 naming the field on the admin plane, in path segments, filters and bodies", async () => {
    await acme.client.identityAdmin.createPool({ body: { name: "edge" } });
    const cases: [string, string, unknown, string][] = [
      ["GET", "/pools/ed%00ge", undefined, "path.pool"],
      ["PATCH", "/pools/edge/tenants/t%00", { displayName: "T" }, "path.tenant"],
      ["DELETE", "/pools/edge/connections/lo%00cal", undefined, "path.kind"],
      ["GET", "/pools/edge/users?emailFilter=a%00", undefined, "query.emailFilter"],
      ["PATCH", "/pools/edge", { displayName: "Edge\0" }, "body.displayName"],
      ["POST", "/pools/edge/tenants", { slug: "t", displayName: "T\0" }, "body.displayName"],
      // JSON documents written as strings: the NUL is an escape in the text, a character in the document.
      ["POST", "/pools/edge/tenants", { slug: "t", metadataJson: '{"a":"\\u0000"}' }, "body.metadataJson.a"],
      [
        "POST",
        "/pools/edge/connections",
        { kind: "local", configJson: '{"a":"\\u0000"}', enabled: true },
        "body.configJson.a",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await callIdentityAdmin(method, path, acme.headers, body);
      expect([answer.status, answer.body]).toEqual([
        400,
        { code: "invalid_argument", message: `${field}: must not contain the NUL character (U+0000)` },
      ]);
    }
  });

  it("are refused as 400 by the issuer, without any credential", async () => {
    const base = `${identityUrl()}/${acme.name}/edge`;
    const token = await fetch(`${base}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=password&email=a%00%40b.example&password=x",
    });
    expect(token.status).toBe(400);
    expect(await token.json()).toMatchObject({
      error: "invalid_request",
      error_description: expect.stringContaining("must not contain the NUL character"),
    });
    const recover = await fetch(`${base}/recover`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "a\0@b.example" }),
    });
    expect(recover.status).toBe(400);
    const pool = await fetch(`${identityUrl()}/${acme.name}/ed%00ge/.well-known/openid-configuration`);
    expect(pool.status).toBe(400);
  });
});

describe("malformed binary messages", () => {
  const malformed = Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
  const path = "/platform.script.v1.ScriptService/ListThreads";
  const expected = "the request message is not a valid binary platform.script.v1.ListThreadsRequest";

  it("are invalid_argument over Connect, POST and GET", async () => {
    const post = await fetch(`${apiUrl()}${path}`, {
      method: "POST",
      headers: { ...acme.headers, "content-type": "application/proto" },
      body: Buffer.from(malformed),
    });
    expect(post.status).toBe(400);
    expect(await post.json()).toMatchObject({ code: "invalid_argument", message: expect.stringContaining(expected) });
    const message = Buffer.from(malformed).toString("base64url");
    const get = await fetch(`${apiUrl()}${path}?connect=v1&encoding=proto&base64=1&message=${message}`, {
      headers: acme.headers,
    });
    expect(get.status).toBe(400);
    expect(await get.json()).toMatchObject({ code: "invalid_argument" });
    // A well-formed message still goes through the same guard.
    const valid = toBinary(ListThreadsRequestSchema, create(ListThreadsRequestSchema, { pageSize: 1 }));
    const ok = await fetch(`${apiUrl()}${path}`, {
      method: "POST",
      headers: { ...acme.headers, "content-type": "application/proto" },
      body: Buffer.from(valid),
    });
    expect(ok.status).toBe(200);
  });

  it("are invalid_argument over gRPC", async () => {
    const { status, message } = await grpcCall(path, envelope(malformed));
    expect(status).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(message)).toContain(expected);
  });

  it("are invalid_argument over gRPC-web", async () => {
    const response = await fetch(`${apiUrl()}${path}`, {
      method: "POST",
      headers: { ...acme.headers, "content-type": "application/grpc-web+proto" },
      body: Buffer.from(envelope(malformed)),
    });
    const trailer =
      response.headers.get("grpc-status") ??
      /grpc-status:\s*(\d+)/.exec(Buffer.from(await response.arrayBuffer()).toString("latin1"))?.[1];
    expect(trailer).toBe(String(Code.InvalidArgument));
  });
});

describe("enum names a server does not know", () => {
  it("are invalid_argument over Connect JSON as over the HTTP route, never an ignored filter", async () => {
    const connect = await fetch(`${apiUrl()}/platform.script.v1.ScriptService/ListThreads`, {
      method: "POST",
      headers: { ...acme.headers, "content-type": "application/json" },
      body: JSON.stringify({ statusFilter: "THREAD_STATUS_BOGUS" }),
    });
    expect([connect.status, ((await connect.json()) as { code: string }).code]).toEqual([400, "invalid_argument"]);
    const route = await fetch(`${apiUrl()}/v1/script/threads?statusFilter=THREAD_STATUS_BOGUS`, {
      headers: acme.headers,
    });
    expect([route.status, ((await route.json()) as { code: string }).code]).toEqual([400, "invalid_argument"]);
  });
});

describe("page tokens", () => {
  it("are signed: a real one pages on, a forged or edited one is invalid_argument on every route", async () => {
    await acme.client.script.createScript({
      name: "paged",
      source: "dsl: script/1\nsteps:\n  - id: one\n    set: {values: {a: 1}}\n",
    });
    for (let i = 0; i < 3; i++) await acme.client.script.createThread({ scriptName: "paged" });
    const first = await acme.client.script.listThreads({ pageSize: 1 });
    expect(first.nextPageToken).not.toBe("");
    const second = await acme.client.script.listThreads({ pageSize: 1, pageToken: first.nextPageToken });
    expect(second.threads[0]!.threadId).not.toBe(first.threads[0]!.threadId);

    const forged = [
      `x${first.nextPageToken}`,
      first.nextPageToken.replace(/.$/, (c) => (c === "A" ? "B" : "A")),
      first.nextPageToken.split(".")[0]!,
    ];
    for (const token of forged) {
      const error = await failure(acme.client.script.listThreads({ pageSize: 1, pageToken: token }));
      expect([error.code, error.rawMessage]).toEqual([
        Code.InvalidArgument,
        "page_token: is not a token from a previous ListThreads response",
      ]);
      const route = await fetch(`${apiUrl()}/v1/script/threads?pageSize=1&pageToken=${encodeURIComponent(token)}`, {
        headers: acme.headers,
      });
      expect(route.status).toBe(400);
    }
    // A token of one list is not a token of another.
    const scripts = await failure(acme.client.script.listScripts({ pageToken: first.nextPageToken }));
    expect(scripts.code).toBe(Code.InvalidArgument);
  });

  it("are signed on the identity admin plane: an edited cursor is 400 naming query.cursor", async () => {
    await acme.client.identityAdmin.createPool({ body: { name: "cursors" } });
    for (const email of ["c1@x.example", "c2@x.example"])
      await acme.client.identityAdmin.createUser({
        path: { pool: "cursors" },
        body: { email, password: "long-enough-password" },
      });
    const page = await acme.client.identityAdmin.listUsers({ path: { pool: "cursors" }, query: { limit: 1 } });
    const cursor = page.nextCursor!;
    const edited = await callIdentityAdmin(
      "GET",
      `/pools/cursors/users?limit=1&cursor=${encodeURIComponent(`x${cursor}`)}`,
      acme.headers,
    );
    expect([edited.status, edited.body.message]).toEqual([
      400,
      "query.cursor: is not a cursor from a previous listUsers page",
    ]);
    const next = await callIdentityAdmin(
      "GET",
      `/pools/cursors/users?limit=1&cursor=${encodeURIComponent(cursor)}`,
      acme.headers,
    );
    expect(next.status).toBe(200);
  });
});

describe("identifiers echoed in messages", () => {
  it("are cut: a 5 MB template id does not come back whole", async () => {
    const error = await failure(acme.client.script.getTemplate({ id: "t".repeat(5 * 1024 * 1024) }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage.length).toBeLessThan(2048);
  });
});

// The transcoded RPC routes, the identity admin plane and the issuer read requests through one
// exchange and answer failures through one error path: the same status, headers and message for
// the same failure, in the body shape each plane's contract gives (the Connect error JSON on the
// RPC routes and the admin plane, `{error}` and RFC 6749 bodies on the issuer).
describe("the REST stacks refuse the same request the same way", () => {
  const LIMIT = 4096;
  let server: StartedServer;
  let headers: Record<string, string>;
  let issuer: string;

  beforeAll(async () => {
    server = await startPlatformServer(["--max-body-bytes", String(LIMIT)]);
    const created = await runAdmin(server.dataDir, ["create-org", "stacks"]);
    headers = {
      authorization: `Bearer ${(created.json as { apiKey: string }).apiKey}`,
      "x-organization-name": "stacks",
    };
    const pool = await fetch(`${server.urls.api}/v1/identity/pools`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "shop" }),
    });
    expect(pool.status).toBe(200);
    issuer = `${server.urls.identity}/stacks/shop`;
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Where each plane answers and how its body carries the message. */
  const planes = () => [
    {
      plane: "RPC route",
      url: `${server.urls.api}/v1/script/env`,
      method: "PUT",
      body: (code: string, message: string) => ({ code, message }),
    },
    {
      plane: "identity admin",
      url: `${server.urls.api}/v1/identity/pools`,
      method: "POST",
      body: (code: string, message: string) => ({ code, message }),
    },
    {
      plane: "issuer",
      url: `${issuer}/signup`,
      method: "POST",
      body: (_code: string, message: string) => ({ error: message }),
    },
    {
      plane: "issuer token (RFC 6749)",
      url: `${issuer}/token`,
      method: "POST",
      body: (code: string, message: string) => ({ error: oauthCodes[code], error_description: message }),
    },
  ];
  const oauthCodes: Record<string, string> = {
    invalid_argument: "invalid_request",
    resource_exhausted: "temporarily_unavailable",
    internal: "server_error",
  };

  async function answer(url: string, init: RequestInit & { duplex?: "half" }) {
    const response = await fetch(url, {
      ...init,
      headers: { ...headers, ...(init.headers as Record<string, string>) },
    });
    return {
      status: response.status,
      allow: response.headers.get("allow"),
      accept: response.headers.get("accept"),
      type: response.headers.get("content-type"),
      body: (await response.json()) as unknown,
    };
  }

  it("404 for an unknown path, with the same message", async () => {
    const rpc = await answer(`${server.urls.api}/v1/script/nothing`, {});
    expect(rpc).toEqual({
      status: 404,
      allow: null,
      accept: null,
      type: "application/json",
      body: { code: "not_found", message: "no route for GET /v1/script/nothing" },
    });
    const plane = await answer(`${issuer}/nothing`, {});
    expect(plane).toEqual({
      status: 404,
      allow: null,
      accept: null,
      type: "application/json",
      body: { error: "no route for GET /stacks/shop/nothing" },
    });
  });

  it("405 with Allow for a known path and another method", async () => {
    const cases: [string, string, string, (message: string) => unknown][] = [
      [
        `${server.urls.api}/v1/script/health`,
        "/v1/script/health",
        "GET",
        (message) => ({ code: "unimplemented", message }),
      ],
      [
        `${server.urls.api}/v1/identity/pools`,
        "/v1/identity/pools",
        "GET, POST",
        (message) => ({ code: "unimplemented", message }),
      ],
      [`${issuer}/signup`, "/stacks/shop/signup", "POST", (message) => ({ error: message })],
    ];
    for (const [url, path, allow, body] of cases) {
      const refused = await answer(url, { method: "DELETE" });
      expect(refused).toEqual({
        status: 405,
        allow,
        accept: null,
        type: "application/json",
        body: body(`DELETE is not allowed on ${path}; allowed: ${allow}`),
      });
    }
  });

  it("413 for a body over the limit, whether its length is declared or it is sent in chunks", async () => {
    const oversized = JSON.stringify({ key: "K", value: "v".repeat(LIMIT) });
    for (const { plane, url, method, body } of planes()) {
      const expected = {
        status: 413,
        allow: null,
        accept: null,
        type: "application/json",
        body: body("resource_exhausted", `request body exceeds ${LIMIT} bytes`),
      };
      const declared = await answer(url, { method, headers: { "content-type": "application/json" }, body: oversized });
      expect({ plane, ...declared }).toEqual({ plane, ...expected });
      const chunked = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(oversized));
          controller.close();
        },
      });
      const streamed = await answer(url, {
        method,
        headers: { "content-type": "application/json" },
        body: chunked,
        duplex: "half",
      });
      expect({ plane, ...streamed }).toEqual({ plane, ...expected });
    }
  });

  it("415 with Accept for a body of a media type the route does not take", async () => {
    for (const { plane, url, method, body } of planes().filter((p) => !p.plane.includes("token"))) {
      const refused = await answer(url, { method, headers: { "content-type": "text/plain" }, body: "key=K" });
      expect({ plane, ...refused }).toEqual({
        plane,
        status: 415,
        allow: null,
        accept: "application/json",
        type: "application/json",
        body: body("invalid_argument", 'unsupported content type "text/plain": send application/json'),
      });
    }
    // The token endpoint takes forms as RFC 6749 clients send them, and JSON.
    const token = await answer(`${issuer}/token`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "grant_type=password",
    });
    expect(token).toEqual({
      status: 415,
      allow: null,
      accept: "application/x-www-form-urlencoded, application/json",
      type: "application/json",
      body: {
        error: "invalid_request",
        error_description:
          'unsupported content type "text/plain": send application/x-www-form-urlencoded, application/json',
      },
    });
  });
});

// A failure underneath (here the database refuses every write to a table) must reach the caller
// as internal with the request id only, on every protocol, and the log must hold the failure
// without the bound values. It needs a database the test can change under a running server.
describe.skipIf(!process.env.TEST_DATABASE_URL)("an unexpected failure underneath", () => {
  it("is internal with the request id on every protocol and REST plane, logged in full without bound values", async () => {
    const server = await startPlatformServer();
    try {
      const created = await runAdmin(server.dataDir, ["create-org", "failing"]);
      const { apiKey } = created.json as { apiKey: string };
      const owner = {
        authorization: `Bearer ${apiKey}`,
        "x-organization-name": "failing",
        "content-type": "application/json",
      };
      const post = (url: string, body: unknown, requestId: string, type = "application/json") =>
        fetch(url, {
          method: "POST",
          headers: { ...owner, "content-type": type, "x-request-id": requestId },
          body: typeof body === "string" ? body : JSON.stringify(body),
        });
      expect((await post(`${server.urls.api}/v1/identity/pools`, { name: "shop" }, "setup-pool")).status).toBe(200);
      const user = { email: "ada@failing.example", password: "correct horse battery staple", emailVerified: true };
      expect((await post(`${server.urls.api}/v1/identity/pools/shop/users`, user, "setup-user")).status).toBe(200);
      const sql = postgres(server.databaseUrl!, { max: 1, onnotice: () => {} });
      for (const table of ["env_vars", "identity_tenants", "identity_users", "identity_refresh_families"]) {
        await sql.unsafe(`alter table ${table} add constraint refuse_writes_${table} check (false) not valid`);
      }
      await sql.end();
      const secretValue = "bound-value-that-must-not-leak-91c2";
      const withCredentials: Interceptor = (next) => (req) => {
        req.header.set("authorization", `Bearer ${apiKey}`);
        req.header.set("x-organization-name", "failing");
        req.header.set("x-request-id", `req-${req.header.get("content-type")?.replace(/\W/g, "-")}`);
        return next(req);
      };
      const all: Transport[] = [
        createConnectTransport({ baseUrl: server.urls.api!, httpVersion: "1.1", interceptors: [withCredentials] }),
        createConnectTransport({
          baseUrl: server.urls.api!,
          httpVersion: "2",
          useBinaryFormat: true,
          interceptors: [withCredentials],
        }),
        createGrpcTransport({ baseUrl: server.urls.api!, interceptors: [withCredentials] }),
        createGrpcWebTransport({ baseUrl: server.urls.api!, httpVersion: "1.1", interceptors: [withCredentials] }),
      ];
      for (const transport of all) {
        const error = await failure(
          createScriptServiceClient(transport, { retry: false }).setEnvVar({ key: "TOKEN", value: secretValue }),
        );
        expect(error.code).toBe(Code.Internal);
        expect(error.rawMessage).toMatch(/^internal error \(request id req-application-[\w-]+\)$/);
      }
      const route = await fetch(`${server.urls.api}/v1/script/env`, {
        method: "PUT",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "x-organization-name": "failing",
          "content-type": "application/json",
          "x-request-id": "req-route",
        },
        body: JSON.stringify({ key: "TOKEN", value: secretValue }),
      });
      expect([route.status, await route.json()]).toEqual([
        500,
        { code: "internal", message: "internal error (request id req-route)" },
      ]);

      // The same failure on the REST planes: the same status and message, in each plane's shape.
      const issuer = `${server.urls.identity}/failing/shop`;
      const admin = await post(
        `${server.urls.api}/v1/identity/pools/shop/tenants`,
        { slug: "t", displayName: secretValue },
        "req-admin",
      );
      expect([admin.status, await admin.json()]).toEqual([
        500,
        { code: "internal", message: "internal error (request id req-admin)" },
      ]);
      const signup = await post(
        `${issuer}/signup`,
        { email: "bob@failing.example", password: secretValue },
        "req-signup",
      );
      expect([signup.status, await signup.json()]).toEqual([500, { error: "internal error (request id req-signup)" }]);
      const grant = new URLSearchParams({
        grant_type: "password",
        email: user.email,
        password: user.password,
      }).toString();
      const token = await post(`${issuer}/token`, grant, "req-token", "application/x-www-form-urlencoded");
      expect([token.status, await token.json()]).toEqual([
        500,
        { error: "server_error", error_description: "internal error (request id req-token)" },
      ]);

      for (const requestId of ["req-route", "req-admin", "req-signup", "req-token"]) {
        const logged = server.logs.filter(
          (line) => line.includes(`"requestId":"${requestId}"`) && line.includes('"level":"error"'),
        );
        expect(logged.length, requestId).toBe(1);
        expect(logged[0]).toContain("refuse_writes");
      }
      expect(server.logs.join("\n")).not.toContain(secretValue);
    } finally {
      await server.stop();
    }
  });
});

function envelope(message: Uint8Array): Uint8Array {
  const framed = new Uint8Array(5 + message.byteLength);
  new DataView(framed.buffer).setUint32(1, message.byteLength);
  framed.set(message, 5);
  return framed;
}

/** One gRPC call over h2c, answering the trailers' status and message. */
function grpcCall(path: string, body: Uint8Array): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(apiUrl());
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...acme.headers,
    });
    let headers: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (trailers) => {
      resolve({ status: String(trailers["grpc-status"] ?? ""), message: String(trailers["grpc-message"] ?? "") });
      session.close();
    });
    stream.on("end", () => {
      // A trailers-only answer carries the status in its headers.
      resolve({ status: String(headers["grpc-status"] ?? ""), message: String(headers["grpc-message"] ?? "") });
      session.close();
    });
    stream.resume();
    stream.end(body);
  });
}
