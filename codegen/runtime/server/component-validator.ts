import type { ValidateFunction } from "ajv";
import type { RestValidationSchemas } from "../rest/rest-plane.js";
import { describeValidationError } from "./describe-validation-error.js";
import { InvalidRequestError } from "./invalid-request-error.js";
import { createAjv } from "./request-validator.js";

/** Checks a value against one of a plane's component schemas. */
export interface ComponentValidator {
  /**
   * @param name the component (`PoolSettings`).
   * @param field how the caller wrote the value (`body.settingsJson`); messages name fields below it.
   * @throws InvalidRequestError naming the field at fault.
   */
  check(name: string, value: unknown, field: string): void;
}

/**
 * For values the request validator cannot reach: a JSON document carried as a string
 * (`contentSchema`) is only text to the body's schema, so its handler parses it and checks the
 * result here, with the same rules and the same messages as a body.
 */
export function createComponentValidator(schemas: RestValidationSchemas): ComponentValidator {
  const ajv = createAjv(false);
  ajv.addSchema(schemas);
  const compiled = new Map<string, ValidateFunction>();
  const resolve = (ref: string) => {
    const name = /^#\/\$defs\/(.+)$/.exec(ref)?.[1];
    return name === undefined
      ? undefined
      : (schemas.$defs[decodeURIComponent(name)] as Record<string, unknown> | undefined);
  };
  return {
    check(name, value, field) {
      let validate = compiled.get(name);
      if (!validate) {
        if (!(name in schemas.$defs)) throw new Error(`no component schema ${name}`);
        validate = ajv.getSchema(`${schemas.$id}#/$defs/${encodeURIComponent(name)}`);
        if (!validate) throw new Error(`component schema ${name} could not be compiled`);
        compiled.set(name, validate);
      }
      // A copy: the validator fills in defaults, and a stored document must stay as it was written.
      const copy = structuredClone(value);
      if (validate(copy)) return;
      const problem = describeValidationError(validate.errors ?? [], field, copy, resolve);
      throw new InvalidRequestError(problem.field, problem.reason);
    },
  };
}
