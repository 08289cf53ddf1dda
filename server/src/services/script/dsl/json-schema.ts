import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, Options, ValidateFunction } from "ajv";
import { RecentMap } from "../../../cache/recent-map.js";
import { isJsonObject } from "./cel-json.js";
import type { JsonObject, JsonValue } from "./cel-json.js";
import { escapePointer } from "./templates.js";

/**
 * JSON Schema for script contracts, with ajv 8.
 *
 * - Dialect: 2020-12 by default (what MCP tool schemas use), draft-07 when `$schema` says so.
 * - Strict: an unknown keyword (`requird`, also `x-…` extensions) is an error, because a typo in
 *   a contract would otherwise silently accept anything. Annotations (`title`, `description`,
 *   `examples`, `default`, `deprecated`) are fine.
 * - `format` is an annotation only: no format validators are loaded.
 * - No remote `$ref`: only references inside the schema resolve.
 *
 * A fresh ajv instance per schema: instances cache every schema they compiled, so a shared one
 * would grow with each published script version. The schema is checked against its meta-schema
 * by one shared instance per dialect (an instance compiles its meta-schema on first use, which
 * costs far more than most contracts), and the last compilations are kept by content: a thread
 * compiles its script's contract at creation, and a busy script's contract is the same each time.
 */

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

const OPTIONS: Options = {
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  allErrors: true,
};

/** A schema problem at a JSON Pointer inside the schema. */
export interface SchemaProblem {
  pointer: string;
  message: string;
  /** Whether the problem is the key at `pointer` (an unknown keyword) rather than its value. */
  at: "key" | "value";
}

export type SchemaCompilation =
  { validate: ValidateFunction; problems: [] } | { validate?: undefined; problems: SchemaProblem[] };

/** Compiles a schema, or explains (with pointers into the schema) why it is not valid. */
export function compileSchema(schema: JsonObject, options: { useDefaults?: boolean } = {}): SchemaCompilation {
  const dialect = schema.$schema;
  if (dialect !== undefined && !(typeof dialect === "string" && (DRAFT_07.test(dialect) || DRAFT_2020.test(dialect)))) {
    return {
      problems: [
        {
          pointer: "/$schema",
          message: "must be the 2020-12 or the draft-07 meta-schema URI (or left out for 2020-12)",
          at: "value",
        },
      ],
    };
  }
  const useDefaults = options.useDefaults === true;
  const draft07 = typeof dialect === "string" && DRAFT_07.test(dialect);
  return compilations.getOrBuild(`${useDefaults ? "d" : "-"}${JSON.stringify(schema)}`, () =>
    compileFresh(schema, draft07, useDefaults),
  );
}

const compilations = new RecentMap<string, SchemaCompilation>(256);

/** One instance per dialect that only checks schemas against the meta-schema; it compiles none. */
const metaCheckers = { draft07: new Ajv(OPTIONS), draft2020: new Ajv2020(OPTIONS) };

function compileFresh(schema: JsonObject, draft07: boolean, useDefaults: boolean): SchemaCompilation {
  const checker = draft07 ? metaCheckers.draft07 : metaCheckers.draft2020;
  if (!checker.validateSchema(schema)) {
    return {
      problems: firstPerPath(checker.errors ?? []).map((error) => ({
        pointer: error.instancePath,
        message: metaSchemaMessage(error),
        at: "value" as const,
      })),
    };
  }
  // The meta-schema check is done above; this instance never compiles its own.
  const settings = { ...OPTIONS, useDefaults, validateSchema: false };
  const ajv = draft07 ? new Ajv(settings) : new Ajv2020(settings);
  try {
    return { validate: ajv.compile(schema), problems: [] };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
    if (keyword !== undefined)
      return {
        problems: [
          {
            pointer: locate(schema, (key) => key === keyword) ?? "",
            message: `unknown keyword "${keyword}"`,
            at: "key",
          },
        ],
      };
    const ref = /can't resolve reference (\S+)/.exec(message)?.[1];
    if (ref !== undefined) {
      return {
        problems: [
          {
            pointer: locate(schema, (key, value) => key === "$ref" && value === ref) ?? "",
            message: `$ref "${ref}" does not resolve (only references inside the schema do)`,
            at: "value",
          },
        ],
      };
    }
    return { problems: [{ pointer: "", message: message.replace(/^strict mode: /, ""), at: "value" }] };
  }
}

/** `field/ticket_id: must be string`-style lines for a value that failed a compiled schema. */
export function describeErrors(errors: readonly ErrorObject[], field: string): string[] {
  return errors.map((error) => {
    const base = `${field}${error.instancePath}`;
    switch (error.keyword) {
      case "required":
        return `${base}/${escapePointer(String(error.params.missingProperty))}: is required`;
      case "additionalProperties":
        return `${base}/${escapePointer(String(error.params.additionalProperty))}: is not allowed (no such property)`;
      case "enum":
        return `${base}: must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")}`;
      default:
        return `${base}: ${error.message ?? "is not valid"}`;
    }
  });
}

/** ajv reports a bad `type` three ways (enum, type, anyOf); the first per path is the clearest. */
function firstPerPath(errors: readonly ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  return errors.filter((error) => !seen.has(error.instancePath) && seen.add(error.instancePath) !== undefined);
}

function metaSchemaMessage(error: ErrorObject): string {
  if (error.keyword === "enum") {
    return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")}`;
  }
  return error.message ?? "is not valid JSON Schema";
}

/** Pointer of the first member (depth first) for which `match` holds. */
function locate(value: JsonValue, match: (key: string, value: JsonValue) => boolean, pointer = ""): string | undefined {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = locate(item, match, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
  } else if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const here = `${pointer}/${escapePointer(key)}`;
      if (match(key, item)) return here;
      const found = locate(item, match, here);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
