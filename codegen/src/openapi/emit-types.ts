import type { OperationModel, ParameterModel, ResponseModel } from "./operation-model.js";
import type { PlaneModel } from "./plane-model.js";
import type { TsFile, TsPrintable } from "../printer/ts-file.js";
import { jsDoc } from "../printer/ts-file.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";
import { createPlaneFile } from "./plane-file.js";
import { schemaType } from "./schema-type.js";
import { literal, propertyKey } from "./ts-syntax.js";

/**
 * `types.ts`: a type per component schema, the plane's server variables, and per operation its
 * parameters, body, SDK call, every documented result and the successful ones. The server and the
 * SDK both import it, so it holds no code.
 */
export function emitTypes(plane: PlaneModel): string {
  const { doc } = plane;
  const f = createPlaneFile(
    plane,
    "types.ts",
    `Types of the ${plane.title}: its schemas and, per operation, its parameters, body and responses.`,
  );
  const out = blocks(f);
  for (const { name, schema } of plane.components) {
    const description = typeof schema === "object" ? (schema as { description?: string }).description : undefined;
    const type = schemaType(doc, schema, `schema ${name}`);
    const declaration = type.startsWith("{\n") ? `export interface ${name} ${type}` : `export type ${name} = ${type};`;
    out.push(`${jsDoc(description)}${declaration}`);
  }
  if (plane.serverVariables.length > 0) {
    const fields = plane.serverVariables
      .map((v) => `${jsDoc(v.description, "  ")}  ${propertyKey(v.name)}: string;\n`)
      .join("");
    out.push(
      `${jsDoc(`Values of the variables of the base path \`${plane.basePath.source}\`.`)}export interface ${plane.typeName}ServerVariables {\n${fields}}`,
    );
  }
  for (const op of plane.operations) operationTypes(f, plane, op);
  return f.content();
}

/** Prints declarations as blocks of the file, each after an empty line. */
function blocks(f: TsFile): { push(...parts: TsPrintable[]): void } {
  return {
    push(...parts) {
      f.print();
      f.print(...parts);
    },
  };
}

function operationTypes(f: TsFile, plane: PlaneModel, op: OperationModel): void {
  const name = op.typeName;
  const at = `${op.operationId} (${op.httpMethod} ${op.path})`;
  const out = blocks(f);
  for (const [place, suffix, what] of [
    ["path", "PathParams", "Path"],
    ["query", "QueryParams", "Query"],
    ["header", "HeaderParams", "Header"],
  ] as const) {
    const list = op.parameters.filter((p) => p.in === place);
    if (list.length > 0)
      out.push(
        `${jsDoc(`${what} parameters of ${at}.`)}export interface ${name}${suffix} {\n${parameterFields(plane, op, list)}}`,
      );
  }
  if (op.requestBody) {
    out.push(
      `${jsDoc(op.requestBody.description ?? `Request body of ${at}.`)}export type ${name}RequestBody = ${schemaType(plane.doc, op.requestBody.schema, `${where(op)} request body`)};`,
    );
  }
  out.push(`${jsDoc(`What the SDK sends for ${at}.`)}${callType(op)}`);
  const members = op.responses.map((r) => resultMembers(f, plane, op, r));
  out.push(jsDoc(`Every response ${at} documents.`), `export type ${name}Result =`, members, ";");
  const success = op.responses.filter((r) => typeof r.status === "number" && r.status < 400).map((r) => r.status);
  const successType = success.length === 0 ? "never" : `Extract<${name}Result, { status: ${success.join(" | ")} }>`;
  out.push(
    `${jsDoc(`The responses of ${at} the SDK returns; it throws RestCallError for the others.`)}export type ${name}Success = ${successType};`,
  );
}

function parameterFields(plane: PlaneModel, op: OperationModel, parameters: readonly ParameterModel[]): string {
  return parameters
    .map((p) => {
      const doc = [p.description, p.deprecated ? "@deprecated" : undefined].filter((l) => l !== undefined).join("\n\n");
      const type = schemaType(plane.doc, p.schema, `${where(op)} parameter ${JSON.stringify(p.name)}`, "  ");
      return `${jsDoc(doc, "  ")}  ${propertyKey(p.name)}${p.required ? "" : "?"}: ${type};\n`;
    })
    .join("");
}

/** The SDK's argument: a part is optional when nothing in it is required. */
function callType(op: OperationModel): string {
  const name = op.typeName;
  const fields: string[] = [];
  for (const [place, key, suffix] of [
    ["path", "path", "PathParams"],
    ["query", "query", "QueryParams"],
    ["header", "headers", "HeaderParams"],
  ] as const) {
    const list = op.parameters.filter((p) => p.in === place);
    if (list.length > 0) fields.push(`  ${key}${list.some((p) => p.required) ? "" : "?"}: ${name}${suffix};\n`);
  }
  if (op.requestBody) fields.push(`  body${op.requestBody.required ? "" : "?"}: ${name}RequestBody;\n`);
  return fields.length === 0
    ? `export type ${name}Call = Record<string, never>;`
    : `export interface ${name}Call {\n${fields.join("")}}`;
}

/** One union member per media type of a response (with `contentType` when there are several). */
function resultMembers(f: TsFile, plane: PlaneModel, op: OperationModel, response: ResponseModel): TsPrintable {
  const listed = op.responses.filter((r) => r.status !== "default").map((r) => r.status);
  const status: TsPrintable =
    response.status === "default"
      ? [
          "Exclude<",
          f.import("HttpErrorStatus", RUNTIME_MODULE, true),
          `, ${listed.length === 0 ? "never" : listed.join(" | ")}>`,
        ]
      : String(response.status);
  const at = `${where(op)} response ${response.status}`;
  const headers = headersType(plane, response, at);
  const contents = response.contents.length === 0 ? [undefined] : response.contents;
  return contents.map((content) => {
    const fields: TsPrintable[] = [["status: ", status]];
    if (content && response.contents.length > 1) fields.push(`contentType: ${literal(content.mediaType)}`);
    if (content) fields.push(`body: ${schemaType(plane.doc, content.schema, at, "    ")}`);
    if (headers) fields.push(headers);
    return [
      "\n",
      jsDoc(response.description, "  "),
      "  | { ",
      fields.flatMap((field, i) => (i === 0 ? [field] : ["; ", field])),
      " }",
    ];
  });
}

/** Where an operation is, in the form error messages name it. */
function where(op: OperationModel): string {
  return `${op.httpMethod} ${op.path} (${op.operationId})`;
}

function headersType(plane: PlaneModel, response: ResponseModel, at: string): string | undefined {
  if (response.headers.length === 0) return undefined;
  const fields = response.headers.map(
    (h) =>
      `${jsDoc(h.description, "      ")}      ${propertyKey(h.name)}${h.required ? "" : "?"}: ${schemaType(plane.doc, h.schema, `${at} header ${h.name}`, "      ")};\n`,
  );
  return `headers${response.headers.some((h) => h.required) ? "" : "?"}: {\n${fields.join("")}    }`;
}
