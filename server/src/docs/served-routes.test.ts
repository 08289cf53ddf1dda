import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "./openapi-document.js";
import { restrictToServedRoutes } from "./served-routes.js";

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

const document: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "t", version: "v1" },
  tags: [{ name: "Served" }, { name: "Other" }],
  paths: {
    "/v1/things/{thing_id}": {
      servers: [{ url: "{api_url}" }],
      parameters: [ref("parameters", "Trace")],
      get: {
        operationId: "getThing",
        tags: ["Served"],
        security: [{ bearer: [] }],
        responses: { "200": { content: { "application/json": { schema: ref("schemas", "Thing") } } } },
      },
      delete: { operationId: "deleteThing", tags: ["Served"], responses: { "200": ref("responses", "Gone") } },
    },
    "/v1/things/{thing_id}/parts/{part=**}:inspect": {
      post: { operationId: "inspect", tags: ["Served"], responses: {} },
    },
    "/v1/others": {
      get: {
        operationId: "listOthers",
        tags: ["Other"],
        security: [{ otherKey: [] }],
        responses: { "200": { content: { "application/json": { schema: ref("schemas", "Other") } } } },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        properties: {
          part: ref("schemas", "Part"),
          kind: {
            oneOf: [ref("schemas", "A")],
            discriminator: { propertyName: "k", mapping: { a: "#/components/schemas/A" } },
          },
        },
      },
      Part: { type: "string" },
      A: { type: "object" },
      Other: { type: "object" },
    },
    parameters: { Trace: { name: "trace", in: "header" } },
    responses: { Gone: { description: "gone" } },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer" },
      otherKey: { type: "apiKey", in: "header", name: "k" },
    },
  },
};

describe("restrictToServedRoutes", () => {
  it("keeps the served operations and what they use, transitively, and nothing else", () => {
    const restricted = restrictToServedRoutes(document, [
      { method: "GET", path: "/v1/things/{id}" },
      { method: "POST", path: "/v1/things/{thing_id}/parts/{part}:inspect" },
    ]);
    expect(Object.keys(restricted.paths)).toEqual([
      "/v1/things/{thing_id}",
      "/v1/things/{thing_id}/parts/{part=**}:inspect",
    ]);
    expect(Object.keys(restricted.paths["/v1/things/{thing_id}"]!)).toEqual(["parameters", "get"]);
    expect(restricted.components).toEqual({
      schemas: { Thing: document.components!.schemas!.Thing, Part: { type: "string" }, A: { type: "object" } },
      parameters: { Trace: { name: "trace", in: "header" } },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    });
    expect(restricted.tags).toEqual([{ name: "Served" }]);
  });

  it("leaves out a path whose operations are all unserved, and a method the route table does not name", () => {
    const restricted = restrictToServedRoutes(document, [{ method: "DELETE", path: "/v1/others" }]);
    expect(restricted.paths).toEqual({});
    expect(restricted.components).toBeUndefined();
    expect(restricted.tags).toEqual([]);
  });
});
