import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RestCallError } from "../runtime/index.js";
import { createGoldenPlaneClient, type GoldenPlaneClient } from "./golden/openapi/golden-plane/client.js";
import { goldenImplementation, serveGoldenPlane, type RunningPlane } from "./golden-plane-server.js";

// The generated SDK client of the golden plane against the runtime serving it: typed results by
// status, errors as one error type, redirects returned rather than followed, bearer tokens only
// where the document asks for one, and retries of idempotent calls.
let plane: RunningPlane;
let client: GoldenPlaneClient;
const implementation = goldenImplementation();
const sent: { url: string; headers: Headers; body: string | undefined }[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  sent.push({
    url: String(input),
    headers: new Headers(init?.headers),
    body: typeof init?.body === "string" ? init.body : undefined,
  });
  return fetch(input, init);
};

beforeAll(async () => {
  plane = await serveGoldenPlane(implementation);
  client = createGoldenPlaneClient({
    baseUrl: `${plane.url}/`,
    serverVariables: { space: "demo" },
    token: () => "good",
    fetch: recordingFetch,
    retry: { initialDelayMs: 1 },
  });
});
afterAll(() => plane.close());

describe("the generated client", () => {
  it("answers a success with its status, body and documented headers", async () => {
    const created = await client.createWidget({
      body: { name: "knob", redirect_uris: ["https://a.example/cb"], tags: ["red"] },
    });
    expect(created).toEqual({
      status: 201,
      body: { name: "knob", redirect_uris: ["https://a.example/cb"], tags: ["red"], id: "w-1" },
      headers: { location: "/demo/widgets/w-1" },
    });
    const fetched = await client.getWidget({ path: { widgetId: created.body.id } });
    expect(fetched.body.name).toBe("knob");
    expect(await client.deleteWidget({ path: { widgetId: "w-1" } })).toEqual({ status: 204 });
  });

  it("writes repeated query parameters and header parameters", async () => {
    const page = await client.listWidgets({
      query: { limit: 3, tag: ["red", "blue"] },
      headers: { "x-trace-id": "t-9" },
    });
    expect(JSON.parse(page.body.next!)).toEqual({
      query: { limit: 3, tag: ["red", "blue"] },
      headers: { "x-trace-id": "t-9" },
      space: "demo",
    });
    expect(sent.at(-1)!.url).toBe(`${plane.url}/demo/widgets?limit=3&tag=red&tag=blue`);
  });

  it("sends the bearer token only to operations that take one", async () => {
    await client.listWidgets();
    expect(sent.at(-1)!.headers.get("authorization")).toBe("Bearer good");
    await client.showLogin({ query: { next: "/x" } });
    expect(sent.at(-1)!.headers.get("authorization")).toBeNull();
  });

  it("sends JSON where the operation accepts it", async () => {
    const token = await client.exchangeToken({
      body: { grant_type: "password", email: "a@b.example", password: "pw" },
    });
    expect(token).toEqual({ status: 200, body: { access_token: "password-token", expires_in: 900 } });
    expect(sent.at(-1)!.headers.get("content-type")).toBe("application/json");
  });

  it("returns a documented redirect instead of following it, and reads pages as text", async () => {
    expect(await client.showLogin({ query: { next: "home" } })).toEqual({
      status: 302,
      headers: { location: "/demo/home" },
    });
    expect(await client.showLogin({ query: { next: "docs" } })).toEqual({
      status: 200,
      body: "<p>sign in to reach docs</p>",
    });
  });

  it("throws an error status as a RestCallError, which is a ConnectError", async () => {
    const error = await client.getWidget({ path: { widgetId: "w-77" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestCallError);
    expect(error).toBeInstanceOf(ConnectError);
    expect(error).toMatchObject({
      status: 404,
      code: Code.NotFound,
      rawMessage: "widget w-77 does not exist",
      body: { error: "widget w-77 does not exist" },
      operationId: "getWidget",
    });
    const oauth = await client
      .exchangeToken({ body: { grant_type: "refresh_token", refresh_token: "busy" } })
      .catch((e: unknown) => e);
    expect(oauth).toMatchObject({ status: 503, code: Code.Unavailable, rawMessage: "the user store is migrating" });
    expect(new ConnectError("plain")).not.toBeInstanceOf(RestCallError);
  });

  it("retries an idempotent call on 503, and converts numeric headers", async () => {
    implementation.unavailableLeft = 2;
    const before = sent.length;
    expect(await client.getWidget({ path: { widgetId: "w-503" } })).toMatchObject({
      status: 200,
      headers: { "retry-after": 7 },
    });
    expect(sent.length - before).toBe(3);
  });

  it("does not retry a call that is not idempotent", async () => {
    const before = sent.length;
    await expect(
      client.exchangeToken({ body: { grant_type: "refresh_token", refresh_token: "busy" } }),
    ).rejects.toThrow("the user store is migrating");
    expect(sent.length - before).toBe(1);
  });

  it("refuses a path value that does not fit before sending anything", async () => {
    const before = sent.length;
    const error = await client.getWidget({ path: { widgetId: "" } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: Code.InvalidArgument });
    expect(String((error as Error).message)).toContain('field "widgetId"');
    expect(sent.length).toBe(before);
  });

  it("percent-encodes server variables into the base path", async () => {
    const other = createGoldenPlaneClient({
      baseUrl: plane.url,
      serverVariables: { space: "a b/c" },
      token: "good",
      fetch: recordingFetch,
    });
    const page = await other.listWidgets();
    expect(JSON.parse(page.body.next!).space).toBe("a b/c");
    expect(sent.at(-1)!.url).toBe(`${plane.url}/a%20b%2Fc/widgets`);
  });
});
