import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, JsonValue } from "./cel-json.js";
import { compileSchema, describeErrors } from "./json-schema.js";
import type { ScriptDocument } from "./script-document.js";

/**
 * A script's contract: the JSON Schemas of its input and final output (`inputs`, `outputs` in the
 * document; ScriptContract in the API). Compiled once per document (cached by identity) and used
 * for every thread of that version:
 *
 * - validateInput checks CreateThread's parsed `input_json` and returns a copy with the schema's
 *   `default`s filled in (what `inputs` binds to); a failure is INVALID_ARGUMENT naming each bad
 *   field as a pointer under the request field: `input_json/ticket_id: must be string`.
 * - validateOutput lists what is wrong with a final output without throwing: a thread that did its
 *   work should not be failed for its shape; the engine records the list on the thread (its `warnings`).
 * - toProto gives the ScriptContract fields (Struct JSON).
 */

export interface CompiledContract {
  validateInput(input: JsonValue, field?: string): JsonObject;
  validateOutput(output: JsonValue): string[];
  toProto(): { inputs: JsonObject; outputs: JsonObject };
}

/** How many field errors one INVALID_ARGUMENT message lists. */
const LISTED_ERRORS = 10;

const compiled = new WeakMap<ScriptDocument, CompiledContract>();

export function compileContract(document: ScriptDocument): CompiledContract {
  const cached = compiled.get(document);
  if (cached !== undefined) return cached;
  // parseScript already compiled both schemas, so failures here are programming errors.
  const inputSchema = compileSchema(document.inputs, { useDefaults: true });
  const outputSchema = compileSchema(document.outputs);
  if (inputSchema.validate === undefined || outputSchema.validate === undefined) {
    throw new Error(
      `compileContract: the document's schemas do not compile: ${JSON.stringify([...inputSchema.problems, ...outputSchema.problems])}`,
    );
  }
  const validateInput = inputSchema.validate;
  const validateOutput = outputSchema.validate;
  const contract: CompiledContract = {
    validateInput(input, field = "input_json") {
      const copy = structuredClone(input);
      if (validateInput(copy)) return copy as JsonObject;
      const lines = describeErrors(validateInput.errors ?? [], field);
      const more = lines.length > LISTED_ERRORS ? `; and ${lines.length - LISTED_ERRORS} more` : "";
      throw new ConnectError(lines.slice(0, LISTED_ERRORS).join("; ") + more, Code.InvalidArgument);
    },
    validateOutput(output) {
      return validateOutput(output) ? [] : describeErrors(validateOutput.errors ?? [], "output");
    },
    toProto() {
      return { inputs: structuredClone(document.inputs), outputs: structuredClone(document.outputs) };
    },
  };
  compiled.set(document, contract);
  return contract;
}

/**
 * CreateThread's `input_json` text → JSON: "" means `{}`; anything that is not JSON is
 * INVALID_ARGUMENT naming the field.
 */
export function parseInputJson(text: string, field = "input_json"): JsonValue {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConnectError(`${field}: is not valid JSON (${reason})`, Code.InvalidArgument);
  }
}
