import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedDispatcher, privateAddressKind } from "../../../net/private-network.js";
import type { HostLookup } from "../../../net/private-network.js";
import { createHttpRequestTool, MAX_RESPONSE_BYTES } from "./http-request-tool.js";
import { createNativeToolSource } from "./native-tools.js";
import { sendJson, startTestServer, testContext, toolError } from "./test-kit.js";
import type { TestServer } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

// The test server listens on loopback, which only a server allowing private networks reaches.
const registry = createToolRegistry([createNativeToolSource({ allowPrivateNetwork: true })]);
const request = (input: JsonObject, signal?: AbortSignal) =>
  registry.invoke("org", "http.request", input, testContext(signal));

let server: TestServer;
/** Called, once each, when the server receives the next /slow request. */
const slowEntered: (() => void)[] = [];

beforeAll(async () => {
  server = await startTestServer(async (received, response) => {
    const path = new URL(received.url, "http://x").pathname;
    if (path === "/json") return sendJson(response, 200, { ok: true, items: [1, 2] });
    if (path === "/problem") {
      response.writeHead(422, { "content-type": "application/problem+json" });
      return void response.end('{"title": "bad"}');
    }
    if (path === "/mislabelled") {
      response.writeHead(200, { "content-type": "application/json" });
      return void response.end("not json");
    }
    if (path === "/cookies") {
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      response.setHeader("x-many", ["one", "two"]);
      return void response.end("ok");
    }
    if (path === "/huge-declared") {
      response.writeHead(200, { "content-length": String(MAX_RESPONSE_BYTES + 1) });
      return void response.write("x"); // never finished: the declared length alone must refuse it
    }
    if (path === "/huge-streamed") {
      const chunk = Buffer.alloc(1024 * 1024, "y");
      response.writeHead(200, { "content-type": "text/plain" });
      const writable = () =>
        new Promise<void>((resolve) => {
          const done = () => (response.off("drain", done), response.off("close", done), resolve());
          response.on("drain", done).on("close", done);
        });
      for (let sent = 0; sent <= MAX_RESPONSE_BYTES && !response.destroyed; sent += chunk.length) {
        if (!response.write(chunk)) await writable();
      }
      return void response.end();
    }
    if (path === "/redirect") {
      response.writeHead(302, { location: new URL(received.url, "http://x").searchParams.get("to") ?? "/" });
      return void response.end();
    }
    if (path === "/slow") {
      slowEntered.splice(0).forEach((entered) => entered());
      return void setTimeout(() => response.end("late"), 5_000).unref();
    }
    // Echo: what the server received, so tests can look at it.
    sendJson(response, 201, {
      method: received.method,
      url: received.url,
      headers: received.headers,
      body: received.body,
    });
  });
});

afterAll(() => server.close());

describe("http.request", () => {
  it("parses a JSON response and reports status, headers and duration", async () => {
    const result = (await request({ url: `${server.url}/json` })) as JsonObject;
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ ok: true, items: [1, 2] });
    expect((result.headers as JsonObject)["content-type"]).toBe("application/json");
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("returns a non-2xx status as a result, and parses +json types", async () => {
    expect(await request({ url: `${server.url}/problem` })).toMatchObject({ status: 422, body: { title: "bad" } });
  });

  it("falls back to text when a JSON-labelled body does not parse", async () => {
    expect(await request({ url: `${server.url}/mislabelled` })).toMatchObject({ status: 200, body: "not json" });
  });

  it("joins repeated response headers", async () => {
    const headers = ((await request({ url: `${server.url}/cookies` })) as JsonObject).headers as JsonObject;
    expect(headers["x-many"]).toBe("one, two");
    expect(headers["set-cookie"]).toBe("a=1, b=2");
  });

  it("adds query parameters, repeated for arrays, to those already in the URL", async () => {
    const { body } = (await request({
      url: `${server.url}/echo?keep=1`,
      query: { q: "a b", n: 2, flag: true, tag: ["x", "y"] },
    })) as JsonObject;
    expect((body as JsonObject).url).toBe("/echo?keep=1&q=a+b&n=2&flag=true&tag=x&tag=y");
  });

  it("sends a JSON body with the step's idempotency key on POST", async () => {
    const { status, body } = (await request({
      method: "post",
      url: `${server.url}/echo`,
      body: { name: "x", n: [1] },
      headers: { "x-trace": "t1" },
    })) as JsonObject;
    expect(status).toBe(201);
    const echoed = body as { method: string; headers: Record<string, string>; body: string };
    expect(echoed.method).toBe("POST");
    expect(JSON.parse(echoed.body)).toEqual({ name: "x", n: [1] });
    expect(echoed.headers["content-type"]).toBe("application/json");
    expect(echoed.headers["idempotency-key"]).toBe("thread-1:main/fetch[0]");
    expect(echoed.headers["x-trace"]).toBe("t1");
  });

  it("sends a text body as text, and keeps a content-type and idempotency key the call sets", async () => {
    const { body } = (await request({
      method: "PUT",
      url: `${server.url}/echo`,
      body: "<a/>",
      headers: { "Content-Type": "application/xml", "Idempotency-Key": "mine" },
    })) as JsonObject;
    const echoed = body as { headers: Record<string, string>; body: string };
    expect(echoed.body).toBe("<a/>");
    expect(echoed.headers["content-type"]).toBe("application/xml");
    expect(echoed.headers["idempotency-key"]).toBe("mine");
  });

  it("sends no idempotency key on GET", async () => {
    const { body } = (await request({ url: `${server.url}/echo` })) as JsonObject;
    expect((body as { headers: Record<string, string> }).headers["idempotency-key"]).toBeUndefined();
  });

  it("sends no body for a null body, even on GET", async () => {
    const { body } = (await request({ url: `${server.url}/echo`, body: null })) as JsonObject;
    expect((body as { body: string }).body).toBe("");
  });

  it("returns an empty body for HEAD", async () => {
    expect(await request({ method: "HEAD", url: `${server.url}/json` })).toMatchObject({ status: 200, body: "" });
  });

  it.each([
    [{ url: "ftp://example.com/x" }, 'url must use http or https, got "ftp"'],
    [{ url: "file:///etc/passwd" }, 'url must use http or https, got "file"'],
    [{ url: "/relative" }, 'url "/relative" is not an absolute URL'],
    [{ url: "http://x", method: "BREW" }, 'method "BREW" is not one of'],
    [{ url: "http://x", body: "x" }, "a GET request cannot have a body"],
    [{ url: "http://x", timeout: "10m" }, "timeout 10m is longer than the maximum of 5m"],
    [{ url: "http://x", timeout: "soon" }, 'timeout "soon" is not a positive duration'],
    [{ url: "http://x", headers: { a: 1 } }, 'headers["a"] must be a string, got number 1'],
    [{ url: "http://x", headers: { "bad name": "v" } }, 'headers["bad name"] is not a valid header name'],
    [{ url: "http://x", query: { a: { b: 1 } } }, 'query["a"] must be a string, number or boolean, got an object'],
    [{ url: "http://x", query: { a: [1, null] } }, 'query["a"][1] must be a string, number or boolean, got null'],
  ])("refuses %j", async (input, message) => {
    expect((await toolError(request(input), "invalid_input")).message).toContain(message);
  });

  it("refuses a response whose declared length is over the cap", async () => {
    const error = await toolError(request({ url: `${server.url}/huge-declared` }), "failed");
    expect(error.message).toMatch(
      /the response body of GET http:\/\/127\.0\.0\.1:\d+\/huge-declared is larger than the limit of 10 MiB/,
    );
  });

  it("stops reading a streamed response at the cap", async () => {
    expect((await toolError(request({ url: `${server.url}/huge-streamed` }), "failed")).message).toContain(
      "is larger than the limit of 10 MiB",
    );
  });

  it("counts the body against the thread's memory as it arrives, and stops reading when it does not fit", async () => {
    let reserved = 0;
    const counting = { reserve: (bytes: number) => void (reserved += bytes) };
    await registry.invoke("org", "http.request", { url: `${server.url}/json` }, { ...testContext(), memory: counting });
    expect(reserved).toBe(JSON.stringify({ ok: true, items: [1, 2] }).length);

    reserved = 0;
    const limited = {
      reserve(bytes: number) {
        if (reserved + bytes > 3 * 1024 * 1024)
          throw new Error(`step "get" (0) exceeded the thread's memory limit of 3 MiB`);
        reserved += bytes;
      },
    };
    const error = await toolError(
      registry.invoke(
        "org",
        "http.request",
        { url: `${server.url}/huge-streamed` },
        { ...testContext(), memory: limited },
      ),
      "failed",
    );
    expect(error.message).toBe(
      `http.request: the response body of GET ${server.url}/huge-streamed was not read in full: step "get" (0) exceeded the thread's memory limit of 3 MiB`,
    );
    expect(reserved).toBeLessThanOrEqual(3 * 1024 * 1024);
  });

  it("times out after the request's timeout", async () => {
    const started = Date.now();
    const error = await toolError(request({ url: `${server.url}/slow?token=secret`, timeout: "100ms" }), "timeout");
    expect(error.message).toMatch(/^http\.request: GET http:\/\/127\.0\.0\.1:\d+\/slow did not answer within 100ms$/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("stops when the caller aborts", async () => {
    const controller = new AbortController();
    // Aborted once the server has the request, so the call is cut in flight.
    slowEntered.push(() => controller.abort());
    await toolError(request({ url: `${server.url}/slow` }, controller.signal), "cancelled");
  });

  it("reports an unreachable target as unavailable", async () => {
    const closed = await startTestServer(() => undefined);
    await closed.close();
    const error = await toolError(request({ url: `${closed.url}/x` }), "unavailable");
    expect(error.message).toMatch(/^http\.request: GET http:\/\/127\.0\.0\.1:\d+\/x failed: .*ECONNREFUSED/);
  });

  it("uses the fetch it is given", async () => {
    const seen: string[] = [];
    const fake: typeof fetch = async (input) => {
      seen.push(String(input));
      return new Response("hi", { status: 200, headers: { "content-type": "text/plain" } });
    };
    const own = createToolRegistry([createNativeToolSource({ fetch: fake })]);
    expect(await own.invoke("org", "http.request", { url: "https://example.com/a" }, testContext())).toMatchObject({
      body: "hi",
    });
    expect(seen).toEqual(["https://example.com/a"]);
  });
});

describe("http.request and private networks", () => {
  const guarded = createToolRegistry([createNativeToolSource()]);
  const call = (registryOf: typeof guarded, url: string) =>
    registryOf.invoke("org", "http.request", { url }, testContext());
  /** A guarded tool whose names resolve from `table`; `reachable` is let through the policy, standing in for a public address. */
  const withNames = (table: Record<string, string>, reachable?: string) => {
    const lookup: HostLookup = async (hostname) => [{ address: table[hostname] ?? "", family: 4 }];
    const policy = (address: string) => (address === reachable ? undefined : privateAddressKind(address));
    const tool = createHttpRequestTool({
      dispatcher: createGuardedDispatcher({ allowPrivateNetwork: false, lookup, policy }),
    });
    return createToolRegistry([{ listTools: async () => [tool] }]);
  };

  it("refuses private IP literals and localhost before connecting, naming the host and why", async () => {
    const port = new URL(server.url).port;
    const refused: Record<string, string> = {
      [`http://127.0.0.1:${port}/json`]: "127.0.0.1 is a loopback address",
      [`http://localhost:${port}/json`]: "localhost is a local name",
      [`http://[::1]:${port}/json`]: "[::1] is a loopback address",
      [`http://[::ffff:127.0.0.1]:${port}/json`]: "[::ffff:7f00:1] is a loopback address",
      "http://169.254.169.254/latest/meta-data/": "169.254.169.254 is a link-local address",
      "http://10.0.0.8/": "10.0.0.8 is a private address",
      "http://100.64.1.1/": "100.64.1.1 is a shared (carrier-grade NAT) address",
      "http://0x7f.1/": "127.0.0.1 is a loopback address",
    };
    const before = server.requests.length;
    for (const [url, why] of Object.entries(refused)) {
      expect((await toolError(call(guarded, url), "invalid_input")).message, url).toBe(
        `http.request: url refused: ${why}, which this server does not connect to`,
      );
    }
    expect(server.requests.length).toBe(before);
  });

  it("refuses a name that resolves to a loopback address when it connects", async () => {
    const port = new URL(server.url).port;
    const error = await toolError(
      call(withNames({ "app.example.test": "127.0.0.1" }), `http://app.example.test:${port}/json?token=secret`),
      "invalid_input",
    );
    expect(error.message).toBe(
      `http.request: GET http://app.example.test:${port}/json refused: app.example.test resolves to 127.0.0.1, a loopback address, which this server does not connect to`,
    );
  });

  it("checks every redirect hop", async () => {
    const port = new URL(server.url).port;
    const tool = withNames({ "public.example.test": "127.0.0.1", "internal.example.test": "10.1.2.3" }, "127.0.0.1");
    const start = `http://public.example.test:${port}`;
    expect(await call(tool, `${start}/redirect?to=${encodeURIComponent(`${start}/json`)}`)).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    const toName = await toolError(
      call(tool, `${start}/redirect?to=${encodeURIComponent("http://internal.example.test/admin")}`),
      "invalid_input",
    );
    expect(toName.message).toMatch(
      /refused: internal\.example\.test resolves to 10\.1\.2\.3, a private address, which this server does not connect to$/,
    );
    const toMetadata = await toolError(
      call(tool, `${start}/redirect?to=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}`),
      "invalid_input",
    );
    expect(toMetadata.message).toMatch(
      /refused: 169\.254\.169\.254 is a link-local address, which this server does not connect to$/,
    );
  });

  it("reaches private hosts when the operator allows them", async () => {
    const port = new URL(server.url).port;
    expect(await call(registry, `http://localhost:${port}/json`)).toMatchObject({ status: 200, body: { ok: true } });
    expect(
      await call(registry, `${server.url}/redirect?to=${encodeURIComponent(`http://[::ffff:127.0.0.1]:${port}/json`)}`),
    ).toMatchObject({ status: 200 });
  });
});
