import { Validator } from "@seriousme/openapi-schema-validator";
import type { OpenAPIObject, ParameterObject, ReferenceObject, ResponseObject } from "openapi3-ts/oas31";
import { describe, expect, it } from "vitest";
import {
  loadOpenApiSource,
  openApiSourceNames,
  operationsOf,
  resolveRef,
  schemaCompilerFor,
} from "./openapi-source.js";

// Every document in openapi/ is the source of truth of a REST-only plane: it must be valid
// OpenAPI 3.1 and keep the conventions the generator builds handlers and SDK methods from.
const names = await openApiSourceNames();
const sources = await Promise.all(names.map(loadOpenApiSource));
const platformAuth = ["none", "pool-bearer", "platform-bearer"];

describe.each(sources)("$name", (source) => {
  const { doc } = source;
  const operations = operationsOf(doc);

  it("validates as OpenAPI 3.1", () => {
    expect(source.errors ?? []).toEqual([]);
    expect(source.valid).toBe(true);
    expect(source.version).toBe("3.1");
  });

  it("reaches every component from an operation, and every $ref resolves", () => {
    const reached = reachableComponents(doc);
    for (const ref of reached) expect(resolveRef(doc, { $ref: ref }), ref).toBeDefined();
    const declared = Object.entries(doc.components ?? {}).flatMap(([kind, entries]) =>
      Object.keys(entries as object).map((key) => `#/components/${kind}/${key}`),
    );
    expect(declared.filter((ref) => !reached.has(ref))).toEqual([]);
  });

  it("compiles every component schema in strict JSON Schema 2020-12", () => {
    const compile = schemaCompilerFor(doc);
    for (const name of Object.keys(doc.components?.schemas ?? {})) {
      expect(() => compile({ $ref: `#/components/schemas/${name}` }), name).not.toThrow();
    }
  });

  it.each(operations.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o] as const))(
    "%s follows the conventions",
    (_, { path, op, pathItem }) => {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(op.tags).toHaveLength(1);
      expect((doc.tags ?? []).map((t) => t.name)).toContain(op.tags![0]);
      expect(op.summary?.trim()).toBeTruthy();
      expect(platformAuth).toContain(op["x-platform-auth"]);
      if (op["x-platform-auth"] === "none") expect(op.security).toEqual([]);
      else expect(op.security?.length).toBeGreaterThan(0);
      if (op["x-platform-rate-limit"] !== undefined) expect(op["x-platform-rate-limit"]).toBe("credential");
      if (op["x-platform-validation"] !== undefined) expect(op["x-platform-validation"]).toBe("handler");

      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = [...(pathItem.parameters ?? []), ...(op.parameters ?? [])]
        .map((p) => resolveRef<ParameterObject>(doc, p as ParameterObject | ReferenceObject))
        .filter((p) => p.in === "path")
        .map((p) => p.name)
        .sort();
      expect(declared).toEqual(templated);

      for (const [status, value] of Object.entries(op.responses ?? {})) {
        const response = resolveRef<ResponseObject>(doc, value as ResponseObject | ReferenceObject);
        expect(response, `${op.operationId} ${status}`).toBeDefined();
        if (status === "default" || Number(status) >= 400) {
          const media = Object.values(response.content ?? {});
          expect(media.length, `${op.operationId} ${status} has a body`).toBeGreaterThan(0);
          for (const m of media) expect(m.schema, `${op.operationId} ${status}`).toBeDefined();
        }
        if (/^3\d\d$/.test(status))
          expect(Object.keys(response.headers ?? {}), `${op.operationId} ${status}`).toContain("Location");
      }
    },
  );
});

describe("all documents together", () => {
  it("use each operationId once", () => {
    const ids = sources.flatMap((s) => operationsOf(s.doc).map((o) => o.op.operationId));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it("would reject a duplicate key, which YAML otherwise resolves silently", async () => {
    const text = ["openapi: 3.1.0", "info: {title: t, version: v}", "paths: {}", "paths: {}", ""].join("\n");
    expect((await new Validator().validate(text)).valid).toBe(false);
  });
});

/**
 * The components an operation can reach: the references in `paths`, followed through the
 * components they name, plus the security schemes operations ask for. A component only another
 * unused component references is therefore still reported.
 */
function reachableComponents(doc: OpenAPIObject): Set<string> {
  const reached = new Set<string>();
  const pending = refsIn(doc.paths);
  for (const { op } of operationsOf(doc)) {
    for (const requirement of op.security ?? [])
      for (const scheme of Object.keys(requirement)) pending.push(`#/components/securitySchemes/${scheme}`);
  }
  while (pending.length > 0) {
    const ref = pending.pop()!;
    if (reached.has(ref)) continue;
    reached.add(ref);
    pending.push(...refsIn(resolveRef(doc, { $ref: ref })));
  }
  return reached;
}

function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) => (key === "$ref" && typeof v === "string" ? [v] : refsIn(v)));
}
