import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsPlugin from "ajv-formats";
import { isFormMediaType, isJsonMediaType, isTextMediaType } from "../rest/media-type.js";
import {
  bodySchemaKey,
  parametersSchemaKey,
  type RestOperation,
  type RestValidationSchemas,
} from "../rest/rest-plane.js";
import { describeValidationError } from "./describe-validation-error.js";
import { InvalidRequestError } from "./invalid-request-error.js";

/** The parameters of a request, as the validator checks them (in place). */
export interface RequestParameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
}

export interface RequestValidator {
  /**
   * Checks an operation's parameters, converting text to the schema's types in place (`"20"` to
   * `20`, a single `?role=a` to `["a"]`).
   *
   * @throws InvalidRequestError naming the field.
   */
  checkParameters(operationId: string, parameters: RequestParameters): void;
  /**
   * Checks a request body. A form body is converted like parameters (all its values arrive as
   * text); a JSON body is not, since JSON has types of its own and `"20"` for a number is an error.
   */
  checkBody(operationId: string, mediaType: string, body: unknown): void;
}

/**
 * Compiles every operation's schemas when the server starts, so a request never waits for ajv and a
 * schema ajv cannot compile stops the start instead of failing some later request. Two ajv
 * instances, since type coercion is a per-instance option: one converts text, one never does.
 */
export function createRequestValidator(
  schemas: RestValidationSchemas,
  operations: readonly RestOperation[],
): RequestValidator {
  const exact = createAjv(false);
  const coercing = createAjv("array");
  exact.addSchema(schemas);
  coercing.addSchema(schemas);
  const compile = (ajv: Ajv2020, key: string): ValidateFunction | undefined => {
    if (!(key in schemas.$defs)) return undefined;
    const validate = ajv.getSchema(`${schemas.$id}#/$defs/${encodeURIComponent(key)}`);
    if (!validate) throw new Error(`validation schema ${key} could not be compiled`);
    return validate;
  };
  const resolve = (ref: string) => {
    const name = /^#\/\$defs\/(.+)$/.exec(ref)?.[1];
    return name === undefined
      ? undefined
      : (schemas.$defs[decodeURIComponent(name)] as Record<string, unknown> | undefined);
  };
  const compiled = new Map(
    operations.map((op) => {
      const types = op.requestBody?.contentTypes ?? [];
      const key = bodySchemaKey(op.operationId);
      return [
        op.operationId,
        {
          parameters: compile(coercing, parametersSchemaKey(op.operationId)),
          exactBody: types.some((t) => isJsonMediaType(t) || isTextMediaType(t)) ? compile(exact, key) : undefined,
          textBody: types.some(isFormMediaType) ? compile(coercing, key) : undefined,
        },
      ] as const;
    }),
  );
  const check = (validate: ValidateFunction | undefined, root: string, data: unknown) => {
    if (!validate || validate(data)) return;
    const { field, reason } = describeValidationError(validate.errors ?? [], root, data, resolve);
    throw new InvalidRequestError(field, reason);
  };
  return {
    checkParameters(operationId, parameters) {
      // The schema's root is the object of the three parts, so the field name already starts with one of them.
      const validate = compiled.get(operationId)?.parameters;
      if (!validate || validate(parameters)) return;
      const { field, reason } = describeValidationError(validate.errors ?? [], "", parameters, resolve);
      throw new InvalidRequestError(field.replace(/^\./, ""), reason);
    },
    checkBody(operationId, mediaType, body) {
      const entry = compiled.get(operationId);
      if (isFormMediaType(mediaType)) check(entry?.textBody, "body", body);
      else if (isJsonMediaType(mediaType) || isTextMediaType(mediaType)) check(entry?.exactBody, "body", body);
    },
  };
}

export function createAjv(coerceTypes: false | "array"): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // The failing schema is needed to list a discriminator's values in the message.
    verbose: true,
    discriminator: true,
    coerceTypes,
    // An absent parameter or property with a default arrives with it, so a handler never repeats it.
    useDefaults: true,
    // Unknown keywords stay errors (the generator strips annotations), but type and tuple hints
    // would only print warnings at every start.
    strictTypes: false,
    strictTuples: false,
  });
  formatsPlugin.default(ajv);
  return ajv;
}
