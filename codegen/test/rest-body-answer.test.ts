import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRestClient, RestCallError, type RestBodyClient } from "../runtime/client/index.js";
import type { GoldenPlaneClient } from "./golden/openapi/golden-plane/client.js";
import { GoldenPlaneRoutes } from "./golden/openapi/golden-plane/routes.js";
import { goldenImplementation, serveGoldenPlane, type RunningPlane } from "./golden-plane-server.js";

// `answer: "body"`, as the SDK builds its REST clients: a success resolves to its body (or, for a
// documented redirect, to its documented headers), every other answer throws RestCallError, and
// onHeader sees the status and headers of each answer.
let plane: RunningPlane;
let client: RestBodyClient<GoldenPlaneClient>;
const implementation = goldenImplementation();

beforeAll(async () => {
  plane = await serveGoldenPlane(implementation);
  client = createRestClient<RestBodyClient<GoldenPlaneClient>>(GoldenPlaneRoutes, {
    baseUrl: plane.url,
    serverVariables: { space: "demo" },
    token: "good",
    answer: "body",
    retry: { initialDelayMs: 1 },
  });
});
afterAll(() => plane.close());

describe("a body-answering REST client", () => {
  it("resolves to the success's body, and to nothing for a success without one", async () => {
    const created = await client.createWidget({
      body: { name: "dial", redirect_uris: ["https://a.example/cb"], tags: [] },
    });
    expect(created).toEqual({
      name: "dial",
      redirect_uris: ["https://a.example/cb"],
      tags: [],
      id: expect.any(String),
    });
    expect((await client.getWidget({ path: { widgetId: created.id } })).name).toBe("dial");
    expect(await client.deleteWidget({ path: { widgetId: created.id } })).toBeUndefined();
  });

  it("resolves a documented redirect to its headers, and a page to its text", async () => {
    expect(await client.showLogin({ query: { next: "home" } })).toEqual({ location: "/demo/home" });
    expect(await client.showLogin({ query: { next: "docs" } })).toBe("<p>sign in to reach docs</p>");
  });

  it("hands each answer's status and headers to onHeader, errors included", async () => {
    const seen: [number, string | null][] = [];
    const onHeader = (headers: Headers, status: number) => seen.push([status, headers.get("content-type")]);
    await client.listWidgets({}, { onHeader });
    await client.getWidget({ path: { widgetId: "w-77" } }, { onHeader }).catch(() => undefined);
    expect(seen).toEqual([
      [200, expect.stringMatching(/^application\/json/)],
      [404, expect.stringMatching(/^application\/json/)],
    ]);
  });

  it("throws an error status as a RestCallError carrying status, code and message", async () => {
    const error = await client.getWidget({ path: { widgetId: "w-77" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestCallError);
    expect(error).toMatchObject({
      status: 404,
      code: Code.NotFound,
      rawMessage: "widget w-77 does not exist",
      operationId: "getWidget",
    });
  });

  it("throws for a redirect the operation does not document instead of returning it", async () => {
    const redirecting: typeof fetch = async () => new Response(null, { status: 304 });
    const other = createRestClient<RestBodyClient<GoldenPlaneClient>>(GoldenPlaneRoutes, {
      baseUrl: plane.url,
      serverVariables: { space: "demo" },
      answer: "body",
      fetch: redirecting,
    });
    await expect(other.listWidgets()).rejects.toMatchObject({ status: 304, code: Code.Unknown });
  });
});
