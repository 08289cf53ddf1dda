import type { ErrorObject } from "ajv";

/** Resolves a `$ref` of the validation document to its schema, for messages that list choices. */
export type SchemaResolver = (ref: string) => Record<string, unknown> | undefined;

/** The first problem ajv found: the field as a caller wrote it, and what is wrong with it. */
export interface ValidationProblem {
  readonly field: string;
  readonly reason: string;
}

/**
 * The first problem ajv found, naming the field the way a caller wrote it
 * (`body.redirect_uris[2]`, `must be a URI`). Errors inside a union that failed as a whole are
 * replaced by the union's own error: which branch was "meant" is a guess, and a guess that
 * names the wrong field is worse than none (a discriminator, when the schema has one, removes
 * the guess altogether).
 */
export function describeValidationError(
  errors: readonly ErrorObject[],
  root: string,
  data: unknown,
  resolve: SchemaResolver,
): ValidationProblem {
  const kept: ErrorObject[] = [];
  for (const error of errors) {
    if (error.keyword === "oneOf" || error.keyword === "anyOf") {
      while (kept.length > 0 && isWithin(kept[kept.length - 1]!.instancePath, error.instancePath)) kept.pop();
    }
    // `if` only repeats that its `then` or `else` failed; those errors are already in the list.
    if (error.keyword !== "if") kept.push(error);
  }
  const error = kept[0];
  if (!error) return { field: root, reason: "is not valid" };
  const [field, reason] = explain(error, fieldName(root, error.instancePath, data), resolve);
  // Under `propertyNames` the value checked is a key of the object, which ajv names beside the error.
  const key = (error as { propertyName?: string }).propertyName;
  if (key !== undefined && error.keyword !== "propertyNames")
    return { field, reason: `key ${JSON.stringify(key)}: ${reason}` };
  return { field, reason };
}

function isWithin(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}/`);
}

/** `/redirect_uris/2` under `body` is `body.redirect_uris[2]`: array indexes in brackets, as in code. */
function fieldName(root: string, instancePath: string, data: unknown): string {
  let name = root;
  let current = data;
  for (const raw of instancePath.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    name += Array.isArray(current) ? `[${segment}]` : member(segment);
    current =
      typeof current === "object" && current !== null ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return name;
}

function member(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

const formatWords: Record<string, string> = {
  uri: "a URI",
  "uri-reference": "a URI reference",
  email: "an e-mail address",
  "date-time": "an RFC 3339 date-time",
  date: "a date (YYYY-MM-DD)",
  time: "a time (HH:MM:SS)",
  uuid: "a UUID",
  hostname: "a host name",
  ipv4: "an IPv4 address",
  ipv6: "an IPv6 address",
};

const typeWords: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

function explain(error: ErrorObject, field: string, resolve: SchemaResolver): [string, string] {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return [`${field}${member(String(p.missingProperty))}`, "is required"];
    case "dependentRequired":
      return [`${field}${member(String(p.missingProperty))}`, `is required when ${String(p.property)} is given`];
    case "additionalProperties":
    case "unevaluatedProperties":
      return [`${field}${member(String(p.additionalProperty ?? p.unevaluatedProperty))}`, "is not an accepted field"];
    case "type":
      return [
        field,
        `must be ${String(p.type)
          .split(",")
          .map((t) => typeWords[t] ?? t)
          .join(" or ")}`,
      ];
    case "format":
      return [field, `must be ${formatWords[String(p.format)] ?? `a valid ${String(p.format)}`}`];
    case "enum":
      return [field, `must be one of: ${(p.allowedValues as unknown[]).map(show).join(", ")}`];
    case "const":
      return [field, `must be ${show(p.allowedValue)}`];
    case "minLength":
      return [field, p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters long`];
    case "maxLength":
      return [field, `must be at most ${String(p.limit)} characters long`];
    case "pattern":
      return [field, `must match the pattern ${String(p.pattern)}`];
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return [field, `must be ${comparisonWords[String(p.comparison)] ?? String(p.comparison)} ${String(p.limit)}`];
    case "multipleOf":
      return [field, `must be a multiple of ${String(p.multipleOf)}`];
    case "minItems":
      return [field, `must have at least ${String(p.limit)} item${p.limit === 1 ? "" : "s"}`];
    case "maxItems":
      return [field, `must have at most ${String(p.limit)} items`];
    case "uniqueItems":
      return [field, `must not repeat an item (items ${String(p.j)} and ${String(p.i)} are equal)`];
    case "minProperties":
      return [field, `must have at least ${String(p.limit)} field${p.limit === 1 ? "" : "s"}`];
    case "maxProperties":
      return [field, `must have at most ${String(p.limit)} fields`];
    case "oneOf":
      return [
        field,
        p.passingSchemas ? "matches more than one of the accepted forms" : "does not match any of the accepted forms",
      ];
    case "anyOf":
      return [field, "does not match any of the accepted forms"];
    case "discriminator":
      return explainDiscriminator(error, field, resolve);
    case "propertyNames":
      return [field, `has a key ${JSON.stringify(p.propertyName)} that is not allowed`];
    case "not":
    case "false schema":
      return [field, "is not allowed"];
    default:
      return [field, error.message ?? "is not valid"];
  }
}

const comparisonWords: Record<string, string> = {
  ">=": "at least",
  "<=": "at most",
  ">": "greater than",
  "<": "less than",
};

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A discriminator failure names the tag and, when the tag has an unknown value, the values it may take. */
function explainDiscriminator(error: ErrorObject, field: string, resolve: SchemaResolver): [string, string] {
  const p = error.params as { error: string; tag: string };
  const where = `${field}${member(p.tag)}`;
  if (p.error !== "mapping") return [where, "must be a string"];
  const branches = ((error.parentSchema as Record<string, unknown> | undefined)?.oneOf ?? []) as Record<
    string,
    unknown
  >[];
  const values = branches.flatMap((branch) => {
    const schema = typeof branch.$ref === "string" ? resolve(branch.$ref) : branch;
    const tag = (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.[p.tag];
    if (tag === undefined) return [];
    return "const" in tag ? [tag.const] : Array.isArray(tag.enum) ? (tag.enum as unknown[]) : [];
  });
  return [where, values.length > 0 ? `must be one of: ${values.map(show).join(", ")}` : "has an unknown value"];
}
