import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { goldenImplementation, serveGoldenPlane, type RunningPlane } from "./golden-plane-server.js";

// The REST runtime serving the golden plane over node:http: routing, parsing, validation naming
// the field, media types, results and the error normaliser, each seen as a plain HTTP client sees it.
let plane: RunningPlane;
const unexpected = vi.fn();

beforeAll(async () => {
  plane = await serveGoldenPlane(goldenImplementation(), { onUnexpectedError: unexpected, readMaxBytes: 4096 });
});
afterAll(() => plane.close());

const auth = { authorization: "Bearer good" };
const json = { ...auth, "content-type": "application/json" };
const form = { "content-type": "application/x-www-form-urlencoded" };

async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const response = await fetch(`${plane.url}${path}`, { method, redirect: "manual", ...init });
  const text = await response.text();
  const type = response.headers.get("content-type") ?? "";
  return {
    status: response.status,
    headers: response.headers,
    type,
    text,
    body: type.startsWith("application/json") && text !== "" ? (JSON.parse(text) as unknown) : text,
  };
}

describe("routing", () => {
  it("answers 404 for a path no operation has, in the plane's error shape", async () => {
    expect(await call("GET", "/demo/gadgets")).toMatchObject({
      status: 404,
      body: { error: "no route for GET /demo/gadgets" },
    });
    expect((await call("GET", "/widgets")).status).toBe(404);
  });

  it("answers 405 with Allow for a known path and another method", async () => {
    const answer = await call("PUT", "/demo/widgets");
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, POST");
  });

  it("gives the base path's variables to the handler", async () => {
    const answer = await call("GET", "/other%20space/widgets", { headers: auth });
    expect(JSON.parse((answer.body as { next: string }).next)).toMatchObject({ space: "other space" });
  });
});

describe("parameters", () => {
  it("converts query text to the schema's types, keeps repeated ones and fills defaults", async () => {
    const answer = await call("GET", "/demo/widgets?tag=red&tag=blue&unknown=1", {
      headers: { ...auth, "x-trace-id": "t-1" },
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse((answer.body as { next: string }).next)).toEqual({
      query: { limit: 20, tag: ["red", "blue"] },
      headers: { "x-trace-id": "t-1" },
      space: "demo",
    });
    const one = await call("GET", "/demo/widgets?limit=5&tag=green", { headers: auth });
    expect(JSON.parse((one.body as { next: string }).next).query).toEqual({ limit: 5, tag: ["green"] });
  });

  it.each([
    ["/demo/widgets?limit=abc", "query.limit: must be an integer"],
    ["/demo/widgets?limit=0", "query.limit: must be at least 1"],
    ["/demo/widgets?limit=1&limit=2", "query.limit: must be given once"],
    ["/demo/widgets?tag=red&tag=purple", "query.tag[1]: must be one of: red, green, blue"],
    ["/demo/widgets/x-1", "path.widgetId: must match the pattern ^w-[0-9]+$"],
  ])("GET %s answers 400: %s", async (path, message) => {
    expect(await call("GET", path, { headers: auth })).toMatchObject({ status: 400, body: { error: message } });
  });
});

describe("JSON bodies", () => {
  const widget = { name: "dial", redirect_uris: ["https://a.example/cb", "https://b.example/cb"] };

  it("passes a valid body and writes the typed result with its headers", async () => {
    const answer = await call("POST", "/demo/widgets", { headers: json, body: JSON.stringify(widget) });
    expect(answer).toMatchObject({ status: 201, body: { ...widget, id: "w-1" } });
    expect(answer.headers.get("location")).toBe("/demo/widgets/w-1");
    expect(answer.type).toBe("application/json");
    expect(await call("POST", "/demo/widgets", { headers: json, body: JSON.stringify(widget) })).toMatchObject({
      status: 409,
      body: { error: "body.name: is taken" },
    });
  });

  it.each([
    [
      { ...widget, redirect_uris: ["https://a.example", "https://b.example", "not a uri"] },
      "body.redirect_uris[2]: must be a URI",
    ],
    [{ name: "dial" }, "body.redirect_uris: is required"],
    [{ ...widget, colour: "red" }, "body.colour: is not an accepted field"],
    [{ ...widget, name: "" }, "body.name: must not be empty"],
    [{ ...widget, size: "big" }, "body.size: must be an integer or null"],
    [{ ...widget, tags: ["red", "red"] }, "body.tags: must not repeat an item (items 0 and 1 are equal)"],
    [{ ...widget, labels: { a: 1 } }, "body.labels.a: must be a string"],
    [{ ...widget, labels: { A: "x" } }, 'body.labels: key "A": must match the pattern ^[a-z]+$'],
    [[widget], "body: must be an object"],
  ])("refuses %j naming the field", async (body, message) => {
    expect(await call("POST", "/demo/widgets", { headers: json, body: JSON.stringify(body) })).toMatchObject({
      status: 400,
      body: { error: message },
    });
  });

  it.each([
    ["a body string", "POST", "/demo/widgets", JSON.stringify({ ...widget, name: "a\u0000b" }), "body.name"],
    [
      "a body key",
      "POST",
      "/demo/widgets",
      JSON.stringify({ ...widget, labels: { "a\u0000": "x" } }),
      "body.labels.a\\0",
    ],
    ["a path segment", "GET", "/demo/widgets/w%00x", undefined, "path.widgetId"],
    ["a query parameter", "GET", "/demo/widgets?tag=a%00", undefined, "query.tag[0]"],
  ])("refuses U+0000 in %s as 400 naming the field", async (_where, method, path, body, field) => {
    const answer = await call(method, path, { headers: json, ...(body === undefined ? {} : { body }) });
    expect(answer).toMatchObject({
      status: 400,
      body: { error: `${field}: must not contain the NUL character (U+0000)` },
    });
  });

  it("refuses malformed JSON, a missing body, a foreign media type and an oversized body", async () => {
    expect(await call("POST", "/demo/widgets", { headers: json, body: "{" })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^body: is not valid JSON/) },
    });
    expect(await call("POST", "/demo/widgets", { headers: auth })).toMatchObject({
      status: 400,
      body: { error: "body: is required" },
    });
    const text = await call("POST", "/demo/widgets", {
      headers: { ...auth, "content-type": "text/plain" },
      body: "dial",
    });
    expect(text).toMatchObject({
      status: 415,
      body: { error: 'unsupported content type "text/plain": send application/json' },
    });
    expect(text.headers.get("accept")).toBe("application/json");
    const big = JSON.stringify({ ...widget, name: "x".repeat(5000) });
    expect(await call("POST", "/demo/widgets", { headers: json, body: big })).toMatchObject({
      status: 413,
      body: { error: "request body exceeds 4096 bytes" },
    });
  });
});

describe("form bodies", () => {
  it("reads a form like JSON, converting its text to the schema's types", async () => {
    const answer = await call("POST", "/demo/login", {
      headers: form,
      body: "email=a%40b.example&password=secret-12&remember=true",
    });
    expect(answer).toMatchObject({
      status: 200,
      type: "text/html; charset=utf-8",
      body: "<p>a@b.example remember=true</p>",
    });
    const asJson = await call("POST", "/demo/login", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "a@b.example", password: "secret-12" }),
    });
    expect(asJson).toMatchObject({ status: 200, body: { error: "a@b.example remember=undefined" } });
  });

  it("validates a discriminated union by its tag, in both encodings", async () => {
    expect(
      await call("POST", "/demo/token", { headers: form, body: "grant_type=password&email=a%40b.example&password=x" }),
    ).toMatchObject({
      status: 200,
      body: { access_token: "password-token", expires_in: 900 },
    });
    expect(
      await call("POST", "/demo/token", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "refresh_token", refresh_token: "r" }),
      }),
    ).toMatchObject({
      status: 200,
      body: { access_token: "refresh_token-token" },
    });
  });

  it("hands an invalid request to an operation that validates in its handler", async () => {
    expect(await call("POST", "/demo/token", { headers: form, body: "grant_type=refresh_token" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request", error_description: "body.refresh_token: is required" },
    });
    expect(await call("POST", "/demo/token", { headers: form, body: "grant_type=client_credentials" })).toMatchObject({
      status: 400,
      body: { error: "invalid_request", error_description: "body.grant_type: must be one of: password, refresh_token" },
    });
    expect(await call("POST", "/demo/token", { headers: form })).toMatchObject({
      status: 400,
      body: { error_description: "body: is required" },
    });
    // The union takes objects only: a JSON body of another type never reaches a branch unchecked.
    for (const body of ['"password"', "[]", "42", "null"]) {
      expect(
        await call("POST", "/demo/token", { headers: { "content-type": "application/json" }, body }),
      ).toMatchObject({
        status: 400,
        body: { error: "invalid_request", error_description: "body: must be an object" },
      });
    }
  });

  it("answers a form post's validation error with a page, and a JSON request's with JSON", async () => {
    const page = await call("POST", "/demo/login", { headers: form, body: "email=nope&password=secret-12" });
    expect(page).toMatchObject({ status: 400, type: "text/html; charset=utf-8" });
    expect(page.text).toContain("body.email: must be an e-mail address");
    const data = await call("POST", "/demo/login", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "nope", password: "secret-12" }),
    });
    expect(data).toMatchObject({ status: 400, body: { error: "body.email: must be an e-mail address" } });
  });
});

describe("HEAD", () => {
  it("answers HEAD on a GET operation like GET, without the body", async () => {
    const answer = await call("HEAD", "/demo/login?next=x");
    expect(answer).toMatchObject({ status: 200, type: "text/html; charset=utf-8", text: "" });
    expect((await call("HEAD", "/demo/token")).status).toBe(405);
  });
});

describe("pages and redirects", () => {
  it("writes an HTML result as text/html and a redirect with Location and no body", async () => {
    expect(await call("GET", "/demo/login?next=%2Fdocs")).toMatchObject({
      status: 200,
      type: "text/html; charset=utf-8",
      body: "<p>sign in to reach /docs</p>",
    });
    const redirect = await call("GET", "/demo/login?next=home");
    expect(redirect).toMatchObject({ status: 302, text: "" });
    expect(redirect.headers.get("location")).toBe("/demo/home");
  });

  it("answers an HTML operation's errors with an escaped page", async () => {
    const answer = await call("GET", "/demo/login?next=");
    expect(answer).toMatchObject({ status: 400, type: "text/html; charset=utf-8" });
    expect(answer.text).toContain("query.next: must not be empty");
  });
});

describe("errors", () => {
  it("writes a thrown ConnectError with its status, message and metadata", async () => {
    expect(await call("GET", "/demo/widgets/w-403")).toMatchObject({ status: 403, body: { error: "not yours" } });
    const unavailable = await call("POST", "/demo/token", {
      headers: form,
      body: "grant_type=refresh_token&refresh_token=busy",
    });
    expect(unavailable).toMatchObject({
      status: 503,
      body: { error: "temporarily_unavailable", error_description: "the user store is migrating" },
    });
    expect(unavailable.headers.get("retry-after")).toBe("5");
  });

  it("hides the text of an unexpected error, answers with the request id and reports it", async () => {
    const answer = await call("GET", "/demo/widgets/w-500", { headers: { "x-request-id": "req-42" } });
    expect(answer).toMatchObject({ status: 500, body: { error: "internal error (request id req-42)" } });
    expect(unexpected).toHaveBeenCalledWith(expect.objectContaining({ message: "connection to db-7 refused" }), {
      procedure: "getWidget",
      requestId: "req-42",
    });
  });

  it("hides a ConnectError that says internal, as it says nothing the caller can act on", async () => {
    const answer = await call("GET", "/demo/widgets/w-5001", { headers: { "x-request-id": "req-43" } });
    expect(answer).toMatchObject({ status: 500, body: { error: "internal error (request id req-43)" } });
  });

  it("cuts a long message that quotes what the caller sent", async () => {
    const answer = await call("GET", `/demo/widgets/w-4040${"4".repeat(5000)}`);
    expect(answer.status).toBe(404);
    expect((answer.body as { error: string }).error.length).toBeLessThanOrEqual(1025);
  });

  it("runs middleware before the handler: no token is 401 with its headers, a token reaches it", async () => {
    const denied = await call("GET", "/demo/me");
    expect(denied).toMatchObject({ status: 401, body: { error: "a valid bearer token is required" } });
    expect(denied.headers.get("www-authenticate")).toBe("Bearer");
    expect(await call("GET", "/demo/me", { headers: auth })).toMatchObject({
      status: 200,
      body: { id: "caller-1", roles: null },
    });
  });

  it("answers 501 for an operation the implementation leaves out", async () => {
    const partial = await serveGoldenPlane({});
    try {
      const answer = await fetch(`${partial.url}/demo/widgets/w-1`);
      expect(answer.status).toBe(501);
      expect(await answer.json()).toEqual({ error: "getWidget is not implemented" });
    } finally {
      await partial.close();
    }
  });
});

describe("sharing a port", () => {
  it("sends requests for paths it does not serve to the fallback, and keeps its own 405", async () => {
    const other = createServer((_request, response) => response.writeHead(299).end("other"));
    const shared = await serveGoldenPlane(goldenImplementation(), {}, (request, response) =>
      other.emit("request", request, response),
    );
    try {
      expect((await fetch(`${shared.url}/v1/things`)).status).toBe(299);
      expect((await fetch(`${shared.url}/demo/widgets`, { method: "PUT" })).status).toBe(405);
      expect((await fetch(`${shared.url}/demo/login?next=x`)).status).toBe(200);
    } finally {
      await shared.close();
    }
  });
});

// Keeps the type import used when the file is read alone.
export type { AddressInfo };
