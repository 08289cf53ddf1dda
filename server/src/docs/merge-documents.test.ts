import { describe, expect, it } from "vitest";
import { mergeDocuments } from "./merge-documents.js";
import type { OpenApiDocument } from "./openapi-document.js";

const base: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "base", version: "v1" },
  tags: [{ name: "Rpc" }],
  paths: {
    "/v1/rpc": {
      get: {
        tags: ["Rpc"],
        security: [{ bearerAuth: [] }],
        responses: { default: { $ref: "#/components/responses/Error" } },
      },
    },
  },
  components: {
    responses: { Error: { description: "the Connect error" } },
    schemas: { Shared: { type: "string" } },
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "an API key" } },
  },
};

const addition: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "admin", version: "v1" },
  tags: [{ name: "Admin" }, { name: "Rpc" }],
  security: [{ adminKey: [] }],
  paths: {
    "/v1/admin/pools": {
      get: {
        tags: ["Admin"],
        responses: {
          default: { $ref: "#/components/responses/Error" },
          "200": { $ref: "#/components/responses/Pools" },
        },
      },
    },
    "/v1/admin/open": { get: { security: [], responses: {} } },
    "/v1/admin/keyed": { get: { security: [{ bearerAuth: [] }], responses: {} } },
  },
  components: {
    responses: {
      Error: { description: "{code, message}" },
      Pools: {
        description: "pools",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Shared" } } },
      },
    },
    schemas: { Shared: { type: "string" } },
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "an API key or token" },
      adminKey: { type: "apiKey", in: "header", name: "x-admin" },
    },
  },
};

describe("mergeDocuments", () => {
  const merged = mergeDocuments(base, addition, "admin");

  it("renames the addition's components whose names mean something else in the base, and its references follow", () => {
    expect(merged.components!.responses).toEqual({
      Error: { description: "the Connect error" },
      "admin.Error": { description: "{code, message}" },
      Pools: addition.components!.responses!.Pools,
    });
    const pools = merged.paths["/v1/admin/pools"]!.get as { responses: Record<string, unknown> };
    expect(pools.responses.default).toEqual({ $ref: "#/components/responses/admin.Error" });
    expect(merged.paths["/v1/rpc"]).toEqual(base.paths["/v1/rpc"]);
  });

  it("keeps one copy of equal components, and of security schemes that differ only in description", () => {
    expect(merged.components!.schemas).toEqual({ Shared: { type: "string" } });
    expect(merged.components!.securitySchemes).toEqual({
      bearerAuth: base.components!.securitySchemes!.bearerAuth,
      adminKey: addition.components!.securitySchemes!.adminKey,
    });
  });

  it("moves the addition's document-wide security onto its operations that name none", () => {
    expect(merged.security).toBeUndefined();
    expect((merged.paths["/v1/admin/pools"]!.get as { security: unknown }).security).toEqual([{ adminKey: [] }]);
    expect((merged.paths["/v1/admin/open"]!.get as { security: unknown }).security).toEqual([]);
    expect((merged.paths["/v1/admin/keyed"]!.get as { security: unknown }).security).toEqual([{ bearerAuth: [] }]);
  });

  it("appends the addition's new tags and refuses a path both describe", () => {
    expect(merged.tags).toEqual([{ name: "Rpc" }, { name: "Admin" }]);
    expect(() => mergeDocuments(base, { ...addition, paths: base.paths }, "admin")).toThrow(
      "both documents describe /v1/rpc",
    );
  });
});

describe("mergeDocuments renaming a security scheme", () => {
  it("rewrites the requirements that name it", () => {
    const merged = mergeDocuments(
      base,
      { ...addition, components: { securitySchemes: { bearerAuth: { type: "apiKey", in: "query", name: "k" } } } },
      "admin",
    );
    expect((merged.paths["/v1/admin/keyed"]!.get as { security: unknown }).security).toEqual([
      { "admin.bearerAuth": [] },
    ]);
    expect(merged.components!.securitySchemes!["admin.bearerAuth"]).toEqual({ type: "apiKey", in: "query", name: "k" });
  });
});
