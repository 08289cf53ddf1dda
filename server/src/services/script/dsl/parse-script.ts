import { RecentMap } from "../../../cache/recent-map.js";
import type { JsonObject, JsonValue } from "./cel-json.js";
import { DocumentReader } from "./document-reader.js";
import { compileSchema } from "./json-schema.js";
import { compileField, readRetry } from "./parse-fields.js";
import { readSteps } from "./parse-steps.js";
import { DSL_VERSION } from "./script-document.js";
import type { ScriptDocument, StepDefaults } from "./script-document.js";
import { checkScopes } from "./script-scope.js";
import { ScriptValidationError } from "./script-validation-error.js";
import { readSource } from "./yaml-source.js";

/**
 * parseScript: script source (YAML, or JSON, which is YAML) → validated ScriptDocument, or a
 * ScriptValidationError listing every problem with its line, column and JSON Pointer.
 *
 * Checks, in one pass over the document: the size limit, YAML syntax, the `dsl` version, unknown
 * keys (with "did you mean"), types, names and id uniqueness, one primitive per step, durations,
 * retry and concurrency bounds, decide branches, expression syntax, and that `inputs`/`outputs`
 * are JSON Schemas of type object. Then, when all of that passed (a half-read document would
 * produce misleading follow-up errors), what expressions refer to (script-scope.ts).
 */

export const MAX_SOURCE_BYTES = 1024 * 1024;
export const MAX_DESCRIPTION_LENGTH = 4000;

const TOP_KEYS = ["dsl", "name", "description", "inputs", "outputs", "defaults", "steps", "output"] as const;

/** The script name rule of CreateScript (script.proto): letters, digits, `-`, `_`, `.`, 1 to 128. */
const SCRIPT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

const publishedDocuments = new RecentMap<string, ScriptDocument>(256);

/**
 * parseScript for a published version's source, which every thread of the version parses again:
 * the documents of the last sources seen are kept (a document is never changed once built). A
 * source that no longer validates throws each time, as parseScript does.
 */
export function parsePublishedScript(source: string): ScriptDocument {
  return publishedDocuments.getOrBuild(source, parseScript);
}

export function parseScript(source: string): ScriptDocument {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > MAX_SOURCE_BYTES) {
    throw new ScriptValidationError([
      {
        path: "",
        line: 1,
        column: 1,
        message: `the source is ${bytes} bytes, more than the limit of 1 MiB (${MAX_SOURCE_BYTES})`,
      },
    ]);
  }
  const { tree, problems } = readSource(source);
  if (tree === undefined) throw new ScriptValidationError(problems);
  const reader = new DocumentReader(tree);
  const document = readDocument(reader, tree.value);
  if (document !== undefined && reader.problems.length === 0) checkScopes(reader, document);
  if (document === undefined || reader.problems.length > 0) throw new ScriptValidationError(reader.problems);
  return document;
}

function readDocument(reader: DocumentReader, value: JsonValue): ScriptDocument | undefined {
  const top = reader.object("", value, "any");
  if (top === undefined) return undefined;
  const has = (key: string) => Object.hasOwn(top, key);

  const dsl = reader.required(top, "", "dsl");
  if (dsl !== undefined && dsl !== DSL_VERSION) {
    // Another version's document would only produce noise under this version's rules.
    reader.report(
      "/dsl",
      `${typeof dsl === "string" ? `unsupported version ${JSON.stringify(dsl)}` : "must be a string"}; this server reads "${DSL_VERSION}"`,
    );
    return undefined;
  }
  reader.knownKeys("", top, TOP_KEYS);
  const name = has("name") ? reader.string("/name", top.name) : undefined;
  if (name !== undefined && !SCRIPT_NAME.test(name))
    reader.report("/name", 'must be 1 to 128 letters, digits, "-", "_" or "."');
  const description = has("description")
    ? reader.string("/description", top.description, { maxLength: MAX_DESCRIPTION_LENGTH })
    : "";
  const inputs = readContractSchema(reader, "/inputs", has("inputs") ? top.inputs : undefined);
  const outputs = readContractSchema(reader, "/outputs", has("outputs") ? top.outputs : undefined);
  const defaults = has("defaults") ? readDefaults(reader, top.defaults as JsonValue) : {};
  const steps = readSteps(
    { reader, ids: new Map(), depth: 0, iterateNames: [], readSteps },
    "/steps",
    reader.required(top, "", "steps"),
  );
  const output = has("output") ? compileField(reader, "/output", top.output as JsonValue) : undefined;

  if (inputs === undefined || outputs === undefined || defaults === undefined || description === undefined)
    return undefined;
  return {
    dsl: DSL_VERSION,
    ...(name === undefined ? {} : { name }),
    description,
    inputs,
    outputs,
    defaults,
    steps,
    ...(output === undefined ? {} : { output }),
  };
}

function readDefaults(reader: DocumentReader, value: JsonValue): StepDefaults | undefined {
  const raw = reader.object("/defaults", value, ["timeout", "retry"]);
  if (raw === undefined) return undefined;
  const timeout = Object.hasOwn(raw, "timeout") ? reader.duration("/defaults/timeout", raw.timeout) : undefined;
  const retry = Object.hasOwn(raw, "retry") ? readRetry(reader, "/defaults/retry", raw.retry as JsonValue) : undefined;
  return { ...(timeout === undefined ? {} : { timeout }), ...(retry === undefined ? {} : { retry }) };
}

/**
 * `inputs` or `outputs`: a JSON Schema whose type is object (the thread input is a set of named
 * parameters; the final output likewise). Left out, it is `{type: object}`: anything goes.
 */
function readContractSchema(
  reader: DocumentReader,
  pointer: string,
  value: JsonValue | undefined,
): JsonObject | undefined {
  if (value === undefined) return { type: "object" };
  const schema = reader.object(pointer, value, "any");
  if (schema === undefined) return undefined;
  if (schema.type !== "object") {
    const why = Object.hasOwn(schema, "type")
      ? `must be "object", not ${JSON.stringify(schema.type)}`
      : 'is required and must be "object"';
    return reader.fail(`${pointer}/type`, `${why}: a script's ${pointer.slice(1)} are named values`);
  }
  const compiled = compileSchema(schema);
  for (const problem of compiled.problems)
    reader.report(`${pointer}${problem.pointer}`, `not valid JSON Schema: ${problem.message}`, problem.at);
  return compiled.problems.length === 0 ? schema : undefined;
}
