import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import { isJsonObject } from "../script/dsl/cel-json.js";
import { compileSchema, describeErrors } from "../script/dsl/json-schema.js";
import { loadTemplateCatalog } from "../script/templates/template-catalog.js";
import type { TemplateCatalog, TemplateEntry } from "../script/templates/template-catalog.js";
import type { ActionDefinition } from "./action-definition.js";
import { ACTION_BINDINGS } from "./action-bindings.js";
import type { ActionBinding } from "./action-bindings.js";

/**
 * The catalog actions: one `<id>.json` per action in server/actions (its README describes the
 * format), each naming a shipped template. Read and checked once, at start-up, against the
 * templates: a definition that names a missing template, binds an input the template does not
 * declare, or routes an output the template does not give stops the server with every problem
 * listed by file, as the template catalog does.
 */

export const SHIPPED_ACTIONS_DIR = fileURLToPath(new URL("../../../actions/", import.meta.url));

/** Selection shapes (the Selection oneof member names), by the pillar that lists them. */
export const SHAPES_BY_PILLAR: Readonly<Record<string, readonly string[]>> = {
  objects: ["object_single", "objects_multi"],
  vectors: ["collection_single", "chunks_multi"],
  tables: ["table_single"],
  "": ["none"],
};
export const SELECTION_SHAPES = Object.values(SHAPES_BY_PILLAR).flat();

/** OutputKind names without their prefix, by the routes that may give them. */
export const OUTPUT_KINDS_BY_ROUTE: Readonly<Record<string, readonly string[]>> = {
  inline: ["JSON", "TEXT", "MARKDOWN", "NONE"],
  file: ["FILE"],
  table: ["TABLE_ROWS"],
  chunks: ["CHUNKS"],
};

/** Capabilities a definition may require: `llm`, an operator LLM endpoint (--llm-base-url). */
export const ACTION_CAPABILITIES = ["llm"];

/**
 * What each route reads of the template: the output members it routes and the form fields
 * (template inputs left to the params) that say where the output goes.
 */
const ROUTE_NEEDS: Readonly<Record<string, { outputs: readonly string[]; params: readonly string[] }>> = {
  inline: { outputs: [], params: [] },
  file: { outputs: ["content", "content_type"], params: [] },
  table: { outputs: ["rows", "columns"], params: ["table_name"] },
  chunks: { outputs: ["vectors"], params: ["collection"] },
};

/** Form fields a binding reads besides its selection (`similar.hits` searches `params.collection`). */
const BINDING_PARAMS: Partial<Record<ActionBinding, readonly string[]>> = { "similar.hits": ["collection"] };

const ACTION_ID = /^[a-z][a-z0-9_]{0,63}$/;
const SUFFIX = ".json";

const DEFINITION_SCHEMA: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: [
    "id",
    "template",
    "name",
    "icon",
    "visibility",
    "invoke",
    "pillars",
    "shapes",
    "acceptedContentTypes",
    "acceptedExtensions",
    "requires",
    "bind",
    "output",
  ],
  properties: {
    id: { type: "string", pattern: ACTION_ID.source },
    template: { type: "string", pattern: ACTION_ID.source },
    name: { type: "string", minLength: 1, maxLength: 100 },
    icon: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,39}$" },
    visibility: { enum: ["primary", "secondary"] },
    invoke: { enum: ["sync", "async"] },
    pillars: { type: "array", minItems: 1, uniqueItems: true, items: { enum: Object.keys(SHAPES_BY_PILLAR) } },
    shapes: { type: "array", minItems: 1, uniqueItems: true, items: { enum: SELECTION_SHAPES } },
    acceptedContentTypes: {
      type: "array",
      uniqueItems: true,
      items: { type: "string", pattern: "^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$" },
    },
    acceptedExtensions: { type: "array", uniqueItems: true, items: { type: "string", pattern: "^\\.[a-z0-9]{1,10}$" } },
    requires: { type: "array", uniqueItems: true, items: { enum: ACTION_CAPABILITIES } },
    bind: {
      type: "object",
      propertyNames: { pattern: "^[a-z][a-z0-9_]{0,63}$" },
      additionalProperties: { enum: Object.keys(ACTION_BINDINGS) },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["kind", "route"],
      properties: {
        kind: { enum: [...new Set(Object.values(OUTPUT_KINDS_BY_ROUTE).flat())] },
        route: { enum: Object.keys(OUTPUT_KINDS_BY_ROUTE) },
        field: { type: "string", minLength: 1 },
        extension: { type: "string", pattern: "^[a-z0-9]{1,10}$" },
      },
    },
  },
};

/** Start-up failure: every problem of the actions folder, each prefixed with its file. */
export class ActionCatalogError extends Error {
  override name = "ActionCatalogError";
  constructor(
    readonly dir: string,
    readonly problems: readonly string[],
  ) {
    super(
      `the actions in ${dir} are not valid (${problems.length} ${problems.length === 1 ? "problem" : "problems"}):${problems.map((problem) => `\n  ${problem}`).join("")}`,
    );
  }
}

/**
 * Reads and checks every definition of `dir` against `templates` (default: the shipped template
 * catalog), giving them by id with each description taken from its template; throws
 * ActionCatalogError.
 */
export async function loadActionDefinitions(
  dir: string = SHIPPED_ACTIONS_DIR,
  templates?: Pick<TemplateCatalog, "entries">,
): Promise<ActionDefinition[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => !name.startsWith(".")).sort();
  } catch (error) {
    throw new ActionCatalogError(dir, [
      `cannot read the folder: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  const catalog = templates ?? (await loadTemplateCatalog());
  const byId = new Map(catalog.entries.map((entry) => [entry.info.id, entry]));
  const problems: string[] = [];
  const definitions: ActionDefinition[] = [];
  for (const name of names) {
    const report = (problem: string) => problems.push(`${name}: ${problem}`);
    if (!name.endsWith(SUFFIX)) {
      if (name !== "README.md") report(`unexpected file (an action is <id>${SUFFIX})`);
      continue;
    }
    const definition = await readDefinition(dir, name, byId, report);
    if (definition !== undefined) definitions.push(definition);
  }
  if (problems.length > 0) throw new ActionCatalogError(dir, problems);
  return definitions;
}

const definitionSchema = compileSchema(DEFINITION_SCHEMA);

async function readDefinition(
  dir: string,
  file: string,
  templates: ReadonlyMap<string, TemplateEntry>,
  report: (problem: string) => void,
): Promise<ActionDefinition | undefined> {
  let value: JsonValue;
  try {
    value = JSON.parse(await readFile(join(dir, file), "utf8")) as JsonValue;
  } catch (error) {
    report(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const validate = definitionSchema.validate;
  if (validate === undefined)
    throw new Error(
      `action-catalog-loader: the definition schema does not compile: ${JSON.stringify(definitionSchema.problems)}`,
    );
  if (!validate(value)) {
    // describeErrors gives "/bind/text: must be one of ..." lines, and ": ..." for the whole object.
    for (const line of describeErrors(validate.errors ?? [], "")) report(line.startsWith(":") ? line.slice(2) : line);
    return undefined;
  }
  const shape = value as unknown as Omit<ActionDefinition, "description">;
  const found: string[] = [];
  const say = (problem: string) => found.push(problem);
  const id = file.slice(0, -SUFFIX.length);
  if (shape.id !== id) say(`/id: ${JSON.stringify(shape.id)} must be the file's name ${JSON.stringify(id)}`);
  checkShapes(shape, say);
  const template = templates.get(shape.template);
  if (template === undefined)
    say(`/template: there is no template ${JSON.stringify(shape.template)} in server/templates`);
  else checkAgainstTemplate(shape, template, say);
  found.forEach(report);
  return found.length === 0 && template !== undefined
    ? { ...shape, description: template.info.description }
    : undefined;
}

function checkShapes(action: Omit<ActionDefinition, "description">, say: (problem: string) => void): void {
  action.shapes.forEach((shape, index) => {
    const pillar = Object.keys(SHAPES_BY_PILLAR).find((key) => SHAPES_BY_PILLAR[key]?.includes(shape));
    if (pillar !== undefined && !action.pillars.includes(pillar))
      say(
        `/shapes/${index}: ${shape} is listed under the pillar ${JSON.stringify(pillar)}, which pillars does not name`,
      );
  });
  action.pillars.forEach((pillar, index) => {
    if (!action.shapes.some((shape) => SHAPES_BY_PILLAR[pillar]?.includes(shape)))
      say(`/pillars/${index}: no shape of the pillar ${JSON.stringify(pillar)} is accepted`);
  });
  const objects = action.shapes.some((shape) => shape === "object_single" || shape === "objects_multi");
  if (!objects && (action.acceptedContentTypes.length > 0 || action.acceptedExtensions.length > 0))
    say("acceptedContentTypes and acceptedExtensions filter objects, and the action accepts no object shape");
  for (const [input, binding] of Object.entries(action.bind)) {
    const from: readonly string[] = ACTION_BINDINGS[binding as ActionBinding];
    const missing = action.shapes.filter((shape) => !from.includes(shape));
    if (missing.length > 0)
      say(
        `/bind/${input}: ${binding} cannot be filled from the shape ${missing.join(", ")} (only from ${from.join(", ")})`,
      );
  }
  const kinds = OUTPUT_KINDS_BY_ROUTE[action.output.route] ?? [];
  if (!kinds.includes(action.output.kind))
    say(`/output/kind: the route ${action.output.route} gives ${kinds.join(" or ")}, not ${action.output.kind}`);
  if ((action.output.route === "inline" || action.output.route === "file") && action.output.extension === undefined)
    say(`/output/extension: is required by the route ${action.output.route} (the name of the sibling output file)`);
  if (action.output.field !== undefined && action.output.route !== "inline")
    say(`/output/field: only the inline route routes one field; the route ${action.output.route} reads its own`);
}

function checkAgainstTemplate(
  action: Omit<ActionDefinition, "description">,
  template: TemplateEntry,
  say: (problem: string) => void,
): void {
  const inputs = propertiesOf(template.info.contract?.inputs);
  const outputs = propertiesOf(template.info.contract?.outputs);
  const name = JSON.stringify(action.template);
  for (const input of Object.keys(action.bind))
    if (!inputs.has(input)) say(`/bind/${input}: the template ${name} has no input ${JSON.stringify(input)}`);
  const bound = new Set(Object.keys(action.bind));
  const needs = ROUTE_NEEDS[action.output.route] ?? { outputs: [], params: [] };
  const params = [
    ...needs.params,
    ...Object.values(action.bind).flatMap((binding) => BINDING_PARAMS[binding as ActionBinding] ?? []),
  ];
  for (const param of new Set(params))
    if (!inputs.has(param) || bound.has(param))
      say(
        `the template ${name} must take the form field ${JSON.stringify(param)} (an input left unbound) for this action`,
      );
  const routed = action.output.field === undefined ? needs.outputs : [action.output.field];
  for (const output of routed)
    if (!outputs.has(output))
      say(
        `/output: the route ${action.output.route} reads the output ${JSON.stringify(output)}, which the template ${name} does not declare`,
      );
}

function propertiesOf(schema: JsonObject | undefined): Set<string> {
  const properties = schema?.properties;
  return new Set(isJsonObject(properties) ? Object.keys(properties) : []);
}
