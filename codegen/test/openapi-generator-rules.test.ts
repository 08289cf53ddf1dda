import { describe, expect, it } from "vitest";
import { generatePlane } from "../src/openapi/generate-plane.js";

// Documents the OpenAPI generator must refuse, each with a message naming the element and the rule.
const operation = (extra: string) => `
    get:
      operationId: getThing
      tags: [Things]
      summary: Get a thing
      x-platform-auth: none
${extra}
      responses:
        "200":
          description: The thing.
          content:
            application/json:
              schema: { type: object }`;

const document = (paths: string, components = "") => `openapi: 3.1.0
info: { title: Things, version: v1 }
paths:
${paths}
${components}`;

const generate =
  (text: string, name = "things") =>
  () =>
    generatePlane(name, "openapi/things.yaml", text);

const cases: [string, string, string][] = [
  [
    "an OpenAPI 3.0 document",
    "openapi: 3.0.3\ninfo: { title: T, version: v1 }\npaths: {}\n",
    'openapi/things.yaml: openapi must be 3.1.x, found "3.0.3"',
  ],
  [
    "duplicate keys",
    document(`  /things:${operation("")}\n  /things:${operation("")}`),
    "openapi/things.yaml: not valid YAML",
  ],
  [
    "an operationId that is not lowerCamelCase",
    document(`  /things:${operation("").replace("getThing", "get-thing")}`),
    'GET /things: operationId must be lowerCamelCase, found "get-thing"',
  ],
  [
    "a missing auth extension",
    document(`  /things:${operation("").replace("      x-platform-auth: none\n", "")}`),
    "GET /things (getThing): x-platform-auth must be one of none, pool-bearer, platform-bearer, found undefined",
  ],
  [
    "an unknown rate limit",
    document(`  /things:${operation("      x-platform-rate-limit: ip")}`),
    'GET /things (getThing): x-platform-rate-limit must be "credential", found "ip"',
  ],
  [
    "two tags",
    document(`  /things:${operation("").replace("[Things]", "[Things, More]")}`),
    "GET /things (getThing): needs exactly one tag, naming its plane",
  ],
  [
    "a path variable without a parameter",
    document(`  /things/{id}:${operation("")}`),
    "GET /things/{id} (getThing): path parameters [] must be exactly the template's [id]",
  ],
  [
    "a cookie parameter",
    document(
      `  /things:${operation("      parameters:\n        - { name: session, in: cookie, schema: { type: string } }")}`,
    ),
    'GET /things (getThing) parameter "session": parameters in cookie are not supported',
  ],
  [
    "a comma-separated query parameter",
    document(
      `  /things:${operation("      parameters:\n        - { name: ids, in: query, explode: false, schema: { type: array, items: { type: string } } }")}`,
    ),
    'GET /things (getThing) parameter "ids": only the default style (form, explode true) is supported',
  ],
  [
    "a body on GET",
    document(
      `  /things:${operation("      requestBody:\n        content:\n          application/json:\n            schema: { type: object }")}`,
    ),
    "GET /things (getThing): a GET cannot have a request body",
  ],
  [
    "media types with different body schemas",
    document(
      `  /things:${operation("").replace("get:", "post:")}`.replace(
        "      x-platform-auth: none\n",
        "      x-platform-auth: none\n      requestBody:\n        content:\n          application/json:\n            schema: { type: object }\n          application/x-www-form-urlencoded:\n            schema: { type: string }\n",
      ),
    ),
    "POST /things (getThing): every media type of the request body must have the same schema",
  ],
  [
    "a status range",
    document(`  /things:${operation("").replace('"200"', '"2XX"')}`),
    "GET /things (getThing): response 2XX must be a status code or default",
  ],
  [
    "an error schema with no message field",
    document(
      `  /things:${operation("")}\n        "404":\n          description: Gone.\n          content:\n            application/json:\n              schema: { type: object, properties: { reason: { type: string } } }`,
    ),
    'GET /things (getThing) response 404 application/json: cannot tell how to write errors in this schema; give it an "error" (and "error_description"), or "code" and "message", or "message" property',
  ],
  [
    "a $ref into a schema",
    document(
      `  /things:${operation("").replace("schema: { type: object }", 'schema: { $ref: "#/components/schemas/Thing/properties/id" }')}`,
      "components:\n  schemas:\n    Thing: { type: object }",
    ),
    'GET /things (getThing) response 200: $ref "#/components/schemas/Thing/properties/id" must name a schema in #/components/schemas/',
  ],
  [
    "a schema named like a generated type",
    document(`  /things:${operation("")}`, "components:\n  schemas:\n    GetThingResult: { type: object }"),
    "openapi/things.yaml: schema GetThingResult has the name of a type generated for operation getThing; rename the schema",
  ],
  [
    "two operations that match the same requests",
    document(
      `  /things/{a}:${operation("      parameters: [{ name: a, in: path, required: true, schema: { type: string } }]")}\n  /things/{b}:${operation("      parameters: [{ name: b, in: path, required: true, schema: { type: string } }]").replace("getThing", "getOther")}`,
    ),
    "openapi/things.yaml: ambiguous routes:\n  GET /things/{a} (getThing) and GET /things/{b} (getOther)",
  ],
  [
    "an undeclared server variable",
    `openapi: 3.1.0\ninfo: { title: T, version: v1 }\nservers: [{ url: "{base}/{tenant}" }]\npaths:\n  /things:${operation("")}\n`,
    "openapi/things.yaml: server URL variable {tenant} is not declared in servers[0].variables",
  ],
];

describe("documents the OpenAPI generator refuses", () => {
  it.each(cases)("%s", (_, text, message) => {
    expect(generate(text)).toThrow(message);
  });

  it("accepts the smallest valid document", () => {
    expect(generate(document(`  /things:${operation("")}`))().size).toBe(5);
  });

  it("refuses a file name that is not kebab-case", () => {
    expect(generate(document(`  /things:${operation("")}`), "Things")).toThrow(
      "openapi/things.yaml: the file name must be kebab-case",
    );
  });
});
