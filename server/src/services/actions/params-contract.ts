import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ValidateFunction } from "ajv";
import { ScriptContractSchema, type ScriptContract } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import { compileSchema } from "../script/dsl/json-schema.js";
import type { ActionTemplate } from "./actions-ports.js";

/**
 * An action's form and the check of its params, both from its template's contract (a JSON Schema
 * of inputs): the form is the contract less the inputs the service binds; params are checked,
 * with the bound values in place, by the script service's own schema compiler.
 */

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The ScriptContract of AvailableAction.params_form; an input with an `enum` gets an enum named after it. */
export function paramsForm(template: ActionTemplate, bound: ReadonlySet<string>): ScriptContract {
  const properties = isObject(template.inputs["properties"]) ? template.inputs["properties"] : {};
  const required = new Set(
    Array.isArray(template.inputs["required"]) ? template.inputs["required"].filter((x) => typeof x === "string") : [],
  );
  const contract = create(ScriptContractSchema);
  for (const [name, schema] of Object.entries(properties)) {
    if (bound.has(name) || !isObject(schema)) continue;
    let type = typeOf(schema);
    if (Array.isArray(schema["enum"])) {
      type = `${name}_values`;
      contract.enums.push({
        $typeName: "platform.data.actions.v1.ContractEnum",
        name: type,
        values: schema["enum"].map((value) => String(value)),
        description: typeof schema["description"] === "string" ? schema["description"] : "",
      });
    }
    const hasDefault = schema["default"] !== undefined;
    contract.inputs.push({
      $typeName: "platform.data.actions.v1.ContractInput",
      name,
      type,
      description: typeof schema["description"] === "string" ? schema["description"] : "",
      required: required.has(name) && !hasDefault,
      ...(hasDefault ? { defaultValue: fromJson(ValueSchema, schema["default"]!) } : {}),
    });
  }
  const outputs = isObject(template.outputs["properties"]) ? template.outputs["properties"] : {};
  for (const [name, schema] of Object.entries(outputs)) {
    contract.outputs.push({
      $typeName: "platform.data.actions.v1.ContractOutput",
      name,
      type: isObject(schema) ? typeOf(schema) : "",
      description: isObject(schema) && typeof schema["description"] === "string" ? schema["description"] : "",
    });
  }
  return contract;
}

function typeOf(schema: JsonObject): string {
  const type = schema["type"];
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return type.find((t) => t !== "null" && typeof t === "string")?.toString() ?? "";
  return "";
}

/** Compiled contracts by their schema's text: a template's is compiled once, not per call. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

/**
 * Checks params with the bound inputs in place against the template's inputs: INVALID_ARGUMENT
 * naming `params.<field>` (or the selection, for a bound input the selection's data fails).
 */
export function checkParams(template: ActionTemplate, params: JsonObject, bound: JsonObject): void {
  if (Object.keys(template.inputs).length === 0) return;
  const boundNames = new Set(Object.keys(bound));
  refuseBoundParams(params, boundNames);
  const validate = compiledInputs(template.inputs);
  if (!validate({ ...params, ...bound })) throw invalidParams(describe(validate, boundNames));
}

/**
 * Checks params alone, against the template's inputs less the bound ones: what a dispatch that
 * resolves its bindings later (a queued one) can check when it is made.
 */
export function checkParamsAlone(template: ActionTemplate, params: JsonObject, boundNames: ReadonlySet<string>): void {
  if (Object.keys(template.inputs).length === 0) return;
  refuseBoundParams(params, boundNames);
  const validate = compiledInputs(withoutInputs(template.inputs, boundNames));
  if (!validate(params)) throw invalidParams(describe(validate, boundNames));
}

function refuseBoundParams(params: JsonObject, boundNames: ReadonlySet<string>) {
  for (const name of Object.keys(params)) {
    if (boundNames.has(name)) throw invalidParams(`params.${name}: is set by the service from the selection`);
  }
}

function withoutInputs(inputs: JsonObject, names: ReadonlySet<string>): JsonObject {
  const properties = isObject(inputs["properties"]) ? inputs["properties"] : {};
  const required = Array.isArray(inputs["required"]) ? inputs["required"] : [];
  return {
    ...inputs,
    properties: Object.fromEntries(Object.entries(properties).filter(([name]) => !names.has(name))),
    required: required.filter((name) => typeof name !== "string" || !names.has(name)),
  };
}

/** The first problems, each naming the field: `params.<field>`, or the selection for a bound input. */
function describe(validate: ValidateFunction, boundNames: ReadonlySet<string>): string {
  const problems = (validate.errors ?? []).slice(0, 5).map((error) => {
    const path = error.instancePath === "" ? [] : error.instancePath.slice(1).split("/");
    if (error.keyword === "required") path.push(String(error.params["missingProperty"]));
    if (error.keyword === "additionalProperties") path.push(String(error.params["additionalProperty"]));
    const field =
      path[0] !== undefined && boundNames.has(path[0])
        ? `selection (bound ${path.join(".")})`
        : `params.${path.join(".")}`;
    const message =
      error.keyword === "required"
        ? "is required"
        : error.keyword === "additionalProperties"
          ? "is not a parameter of this action"
          : error.keyword === "enum"
            ? `must be one of ${((error.params["allowedValues"] as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(", ")}`
            : (error.message ?? "is not valid");
    return `${field.replace(/\.$/, "")}: ${message}`;
  });
  return problems.join("; ");
}

const invalidParams = (message: string) => new ConnectError(message, Code.InvalidArgument);

function compiledInputs(inputs: JsonObject): ValidateFunction {
  const text = JSON.stringify(inputs);
  const cached = compiled.get(text);
  if (cached) return cached;
  const { validate } = compileSchema(inputs);
  if (!validate) throw new ConnectError("the action's template contract cannot be applied", Code.FailedPrecondition);
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(text, validate);
  return validate;
}
