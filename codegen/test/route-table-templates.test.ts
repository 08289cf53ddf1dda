import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { defineHttpRoutes, type ServiceHttpRoutes } from "../runtime/http-route.js";
import { parsePathTemplate } from "../runtime/path-template/index.js";
import { defineRestPlane, type RestPlane } from "../runtime/rest/rest-plane.js";
import { GenerationError } from "../src/generation-error.js";
import { templateLiteral } from "../src/printer/template-literal.js";
import { ScriptService } from "../../gen/platform/script/v1/script_service_pb.js";

// Generated route tables write each path template as its text, which a reader can check against
// the contract at a glance, and parse it once when the module loads.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

async function filesUnder(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const protoTables = await filesUnder(join(root, "gen/platform"), (name) => name.endsWith("_http.ts"));
const planeTables = await filesUnder(join(root, "gen/openapi"), (name) => name === "routes.ts");

/** The string literals written after `key:` in a generated file, in order. */
function writtenStrings(text: string, key: string): string[] {
  return [...text.matchAll(new RegExp(`^\\s*${key}: (.*),$`, "gm"))].map((m) => JSON.parse(m[1]!) as string);
}

describe("generated route tables", () => {
  it("are found", () => {
    expect(protoTables.length).toBeGreaterThan(5);
    expect(planeTables.map((file) => relative(root, file))).toEqual([
      "gen/openapi/git/routes.ts",
      "gen/openapi/identity-admin/routes.ts",
      "gen/openapi/identity-issuer/routes.ts",
      "gen/openapi/registry/routes.ts",
    ]);
  });

  it.each(protoTables.map((file) => [relative(root, file), file]))(
    "%s writes templates as strings and parses them when it loads",
    async (_name, file) => {
      const text = await readFile(file, "utf8");
      expect(text).not.toContain('"segments"');
      const written = writtenStrings(text, "template");
      expect(written.every((t) => typeof t === "string" && t.startsWith("/"))).toBe(true);
      const module = (await import(pathToFileURL(file).href)) as Record<string, ServiceHttpRoutes>;
      const tables = Object.values(module);
      const loaded = tables.flatMap((table) => table.routes.map((route) => route.template));
      expect(loaded).toEqual(written.map((source) => parsePathTemplate(source)));
      expect(loaded.map((template) => template.source)).toEqual(written);
    },
  );

  it.each(planeTables.map((file) => [relative(root, file), file]))(
    "%s writes its base path and templates as strings",
    async (_name, file) => {
      const text = await readFile(file, "utf8");
      expect(text).not.toContain('"segments"');
      const written = writtenStrings(text, "template");
      const [basePath] = writtenStrings(text, "basePath");
      const module = (await import(pathToFileURL(file).href)) as Record<string, RestPlane>;
      const [plane] = Object.values(module);
      expect(plane!.basePath).toEqual(parsePathTemplate(basePath!));
      expect(plane!.operations.map((op) => op.template)).toEqual(written.map((source) => parsePathTemplate(source)));
    },
  );
});

describe("loading a route table", () => {
  it("parses with the path-template parser, so a broken text fails at load, not on a request", () => {
    const route = {
      rpc: "healthCheck",
      httpMethod: "GET",
      body: "",
      responseBody: "",
      queryFields: [],
      additionalBinding: false,
    };
    expect(
      defineHttpRoutes(ScriptService, [{ ...route, template: "/v1/{name=shelves/*}:check" }]).routes[0]!.template,
    ).toMatchObject({
      segments: [{ kind: "literal", value: "v1" }, { kind: "literal", value: "shelves" }, { kind: "wildcard" }],
      variables: [{ fieldPath: "name", start: 1, end: 3 }],
      verb: "check",
    });
    expect(() => defineHttpRoutes(ScriptService, [{ ...route, template: "v1/health" }])).toThrow(
      /must start with "\/"/,
    );
    expect(() => defineRestPlane({ name: "p", basePath: "/{org", errorBody: "message", operations: [] })).toThrow(
      /path template/,
    );
  });
});

describe("the generator", () => {
  it("writes a template's text only when the same parser gives the template back", () => {
    const template = parsePathTemplate("/v1/{name=projects/*}/things");
    expect(templateLiteral(template, "rpc X")).toBe('"/v1/{name=projects/*}/things"');
    // A template whose text says something else than its parsed form, as a hand-built one might.
    expect(() => templateLiteral({ ...template, source: "/v1/{name}/things" }, "rpc X")).toThrow(GenerationError);
    expect(() => templateLiteral({ ...template, source: "/v1/{name" }, "rpc X")).toThrow(/rpc X: path template/);
  });
});
