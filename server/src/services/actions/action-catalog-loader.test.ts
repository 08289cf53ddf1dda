import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../script/dsl/cel-json.js";
import { loadTemplateCatalog } from "../script/templates/template-catalog.js";
import type { TemplateCatalog } from "../script/templates/template-catalog.js";
import { ACTION_BINDINGS } from "./action-bindings.js";
import {
  ActionCatalogError,
  loadActionDefinitions,
  OUTPUT_KINDS_BY_ROUTE,
  SELECTION_SHAPES,
} from "./action-catalog-loader.js";
import type { ActionDefinition } from "./action-definition.js";

let templates: TemplateCatalog;
let shipped: ActionDefinition[];
beforeAll(async () => {
  templates = await loadTemplateCatalog();
  shipped = await loadActionDefinitions(undefined, templates);
});

const inputsOf = (template: string) =>
  (templates.entries.find((entry) => entry.info.id === template)?.info.contract?.inputs?.properties ??
    {}) as JsonObject;

describe("the shipped actions (server/actions)", () => {
  it("are the catalog actions, each running its action_ template, with the template's description", () => {
    expect(shipped.map((action) => [action.id, action.template])).toEqual([
      ["combine_texts", "action_combine_texts"],
      ["describe_table", "action_describe_table"],
      ["embed_into_collection", "action_embed_into_collection"],
      ["export_chunks_json", "action_export_chunks_json"],
      ["export_table_csv", "action_export_table_csv"],
      ["extract_text", "action_extract_text"],
      ["find_similar_objects", "action_find_similar_objects"],
      ["import_table", "action_import_table"],
      ["redact_pii", "action_redact_pii"],
      ["summarize", "action_summarize"],
    ]);
    for (const action of shipped) {
      const template = templates.getTemplate(action.template).info;
      expect(action.description).toBe(template.description);
      expect(action.description).not.toBe("");
    }
  });

  it("bind only inputs their templates declare, from known bindings the accepted shapes can fill", () => {
    for (const action of shipped) {
      const inputs = inputsOf(action.template);
      for (const [input, binding] of Object.entries(action.bind)) {
        expect({ action: action.id, input, declared: input in inputs }).toEqual({
          action: action.id,
          input,
          declared: true,
        });
        expect(Object.keys(ACTION_BINDINGS)).toContain(binding);
        for (const shape of action.shapes)
          expect(ACTION_BINDINGS[binding as keyof typeof ACTION_BINDINGS] as readonly string[]).toContain(shape);
      }
      for (const shape of action.shapes) expect(SELECTION_SHAPES).toContain(shape);
      expect(OUTPUT_KINDS_BY_ROUTE[action.output.route]).toContain(action.output.kind);
    }
  });

  // The form of each action: the template's inputs that no binding fills (paramsForm).
  it("leave each action the form fields its README lists", () => {
    const forms = Object.fromEntries(
      shipped.map((action) => [
        action.id,
        Object.keys(inputsOf(action.template)).filter((name) => !(name in action.bind)),
      ]),
    );
    expect(forms).toEqual({
      combine_texts: ["title"],
      describe_table: [],
      embed_into_collection: ["collection", "chunk_size", "chunk_overlap", "batch_size"],
      export_chunks_json: ["include_metadata"],
      export_table_csv: ["delimiter", "header"],
      extract_text: ["max_characters"],
      find_similar_objects: ["collection", "top_k"],
      import_table: ["table_name", "replace"],
      redact_pii: ["kinds", "replacement"],
      summarize: ["max_words", "style", "focus", "language", "part_size", "model"],
    });
  });

  it("route each action's output as its README says", () => {
    expect(
      Object.fromEntries(
        shipped.map((action) => [action.id, [action.invoke, action.output.kind, action.output.route]]),
      ),
    ).toEqual({
      combine_texts: ["sync", "MARKDOWN", "inline"],
      describe_table: ["sync", "JSON", "inline"],
      embed_into_collection: ["async", "CHUNKS", "chunks"],
      export_chunks_json: ["sync", "FILE", "file"],
      export_table_csv: ["sync", "FILE", "file"],
      extract_text: ["sync", "TEXT", "inline"],
      find_similar_objects: ["sync", "JSON", "inline"],
      import_table: ["sync", "TABLE_ROWS", "table"],
      redact_pii: ["sync", "TEXT", "inline"],
      summarize: ["async", "MARKDOWN", "inline"],
    });
    expect(shipped.filter((action) => action.requires.includes("llm")).map((action) => action.id)).toEqual([
      "summarize",
    ]);
  });
});

describe("loadActionDefinitions", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "actions-"));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  const valid = {
    id: "shout",
    template: "action_redact_pii",
    name: "Shout",
    icon: "megaphone",
    visibility: "primary",
    invoke: "sync",
    pillars: ["objects"],
    shapes: ["object_single"],
    acceptedContentTypes: ["text/plain"],
    acceptedExtensions: [".txt"],
    requires: [],
    bind: { text: "object.text", source_key: "object.key" },
    output: { kind: "TEXT", route: "inline", field: "text", extension: "txt" },
  };

  it("lists every problem of the folder, by file", async () => {
    const dir = await mkdtemp(join(folder, "broken-"));
    const files: Record<string, unknown> = {
      "shout.json": valid,
      "renamed.json": { ...valid, id: "other" },
      "unknown.json": { ...valid, template: "no_such_template", bind: { text: "object.txt" }, description: "x" },
      "wrong.json": {
        ...valid,
        id: "wrong",
        pillars: ["objects", "tables"],
        shapes: ["object_single", "table_single"],
        bind: { text: "object.text", body: "object.key" },
        output: { kind: "TABLE_ROWS", route: "table", field: "rows" },
      },
      "table.json": {
        ...valid,
        id: "table",
        pillars: ["tables"],
        shapes: ["table_single"],
        bind: {},
        output: { kind: "TABLE_ROWS", route: "table" },
      },
      "notes.txt": "hello",
      "bad.json": "{",
    };
    for (const [name, content] of Object.entries(files))
      await writeFile(join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
    const error = await loadActionDefinitions(dir, templates).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ActionCatalogError);
    expect((error as ActionCatalogError).problems).toEqual([
      expect.stringMatching(/^bad\.json: not valid JSON: /),
      "notes.txt: unexpected file (an action is <id>.json)",
      'renamed.json: /id: "other" must be the file\'s name "renamed"',
      "table.json: acceptedContentTypes and acceptedExtensions filter objects, and the action accepts no object shape",
      'table.json: the template "action_redact_pii" must take the form field "table_name" (an input left unbound) for this action',
      'table.json: /output: the route table reads the output "rows", which the template "action_redact_pii" does not declare',
      'table.json: /output: the route table reads the output "columns", which the template "action_redact_pii" does not declare',
      "unknown.json: /description: is not allowed (no such property)",
      expect.stringMatching(/^unknown\.json: \/bind\/text: must be one of "object\.bucket", /),
      "wrong.json: /bind/text: object.text cannot be filled from the shape table_single (only from object_single)",
      "wrong.json: /bind/body: object.key cannot be filled from the shape table_single (only from object_single)",
      "wrong.json: /output/field: only the inline route routes one field; the route table reads its own",
      'wrong.json: /bind/body: the template "action_redact_pii" has no input "body"',
      'wrong.json: the template "action_redact_pii" must take the form field "table_name" (an input left unbound) for this action',
      'wrong.json: /output: the route table reads the output "rows", which the template "action_redact_pii" does not declare',
    ]);
    expect((error as Error).message).toMatch(/^the actions in .* are not valid \(15 problems\):\n {2}bad\.json: /);
  });

  it("refuses a route and kind that do not go together, and an unknown template", async () => {
    const dir = await mkdtemp(join(folder, "kinds-"));
    await writeFile(
      join(dir, "shout.json"),
      JSON.stringify({
        ...valid,
        template: "summarize_everything",
        output: { kind: "FILE", route: "inline", extension: "txt" },
      }),
    );
    const error = (await loadActionDefinitions(dir, templates).catch(
      (thrown: unknown) => thrown,
    )) as ActionCatalogError;
    expect(error.problems).toEqual([
      "shout.json: /output/kind: the route inline gives JSON or TEXT or MARKDOWN or NONE, not FILE",
      'shout.json: /template: there is no template "summarize_everything" in server/templates',
    ]);
  });

  it("loads a valid folder, with descriptions from the templates", async () => {
    const dir = await mkdtemp(join(folder, "valid-"));
    await writeFile(join(dir, "shout.json"), JSON.stringify(valid));
    await writeFile(join(dir, "README.md"), "# Actions\n");
    expect(await loadActionDefinitions(dir, templates)).toEqual([
      { ...valid, description: templates.getTemplate("action_redact_pii").info.description },
    ]);
  });

  it("says when the folder cannot be read", async () => {
    const error = (await loadActionDefinitions(join(folder, "missing"), templates).catch(
      (thrown: unknown) => thrown,
    )) as ActionCatalogError;
    expect(error.problems).toEqual([expect.stringMatching(/^cannot read the folder: ENOENT/)]);
  });
});
