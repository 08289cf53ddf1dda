import { readFile } from "node:fs/promises";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { parseSse } from "../../codegen/runtime/stream-framing/sse.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// What the OpenAPI document promises is always there must be there: for real answers of the
// running binary to a few operations, every field a response schema lists in `required` is
// present, at every depth. The schemas come from the committed merged document, by operation id.
interface Schema {
  readonly $ref?: string;
  readonly type?: string;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema | boolean>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly allOf?: readonly Schema[];
}
interface Operation {
  readonly operationId: string;
  readonly responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { readonly schemas: Record<string, Schema> };
}

const doc = JSON.parse(
  await readFile(new URL("../../gen/openapi/platform.openapi.json", import.meta.url), "utf8"),
) as Document;

function responseSchema(operationId: string, mediaType = "application/json"): Schema {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (op.operationId === operationId) return op.responses["200"]!.content![mediaType]!.schema;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

const resolve = (schema: Schema): Schema =>
  schema.$ref ? resolve(doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")]!) : schema;

/**
 * Walks a JSON value along its schema: every `required` name of an object schema must be a key of
 * the value. A oneof's alternatives are left out: their `required` says which member is set, not
 * that one always is. Returns the missing fields and how many required fields were checked.
 */
function checkRequired(schema: Schema, value: unknown, at: string, result = { missing: [] as string[], checked: 0 }) {
  const s = resolve(schema);
  if (Array.isArray(value)) {
    if (s.items) value.forEach((item, i) => checkRequired(s.items!, item, `${at}[${i}]`, result));
    return result;
  }
  if (value === null || typeof value !== "object") return result;
  const object = value as Record<string, unknown>;
  for (const name of s.required ?? []) {
    result.checked++;
    if (!(name in object)) result.missing.push(`${at}.${name}`);
  }
  for (const [key, member] of Object.entries(object)) {
    const sub =
      s.properties?.[key] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
    if (sub && typeof sub === "object") checkRequired(sub, member, `${at}.${key}`, result);
  }
  for (const part of s.allOf ?? []) checkRequired(part, value, at, result);
  return result;
}

let acme: TestOrganization;
beforeAll(async () => {
  acme = await createOrganization("oas");
});

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await request(`${apiUrl()}${path}`, {
    method: method as "GET",
    headers: { ...acme.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  expect(response.statusCode, `${method} ${path}: ${text}`).toBe(200);
  return JSON.parse(text) as unknown;
}

/** Asserts the answer holds every required field of the operation's response schema; returns how many were checked. */
function expectRequiredPresent(operationId: string, value: unknown, mediaType?: string): number {
  const { missing, checked } = checkRequired(responseSchema(operationId, mediaType), value, operationId);
  expect(missing).toEqual([]);
  return checked;
}

const script = `dsl: script/1
steps:
  - id: greet
    execute: {tool: template.render, input: {template: "hello {{ who }}", values: {who: world}}}
`;

describe("required fields of response schemas, against the running server (api listener)", () => {
  it("script: health, environment variables, scripts", async () => {
    expect(expectRequiredPresent("ScriptService_HealthCheck", await call("GET", "/v1/script/health"))).toBeGreaterThan(
      0,
    );
    expectRequiredPresent(
      "ScriptService_SetEnvVar",
      await call("PUT", "/v1/script/env", { key: "REGION", value: "eu-west" }),
    );
    expectRequiredPresent("ScriptService_GetEnvVar", await call("GET", "/v1/script/env/REGION"));
    expectRequiredPresent("ScriptService_ListEnvVars", await call("GET", "/v1/script/env"));
    expectRequiredPresent(
      "ScriptService_CreateScript",
      await call("POST", "/v1/script/scripts", { name: "greeter", source: script }),
    );
    expectRequiredPresent("ScriptService_GetScript", await call("GET", "/v1/script/scripts/greeter"));
    expectRequiredPresent("ScriptService_ListTools", await call("GET", "/v1/script/tools"));
  });

  it("script: a thread, its events as server-sent events, its result", async () => {
    const created = (await call("POST", "/v1/script/threads", { scriptName: "greeter" })) as { threadId: string };
    expectRequiredPresent("ScriptService_CreateThread", created);
    const watch = await request(`${apiUrl()}/v1/script/threads/${created.threadId}/watch`, { headers: acme.headers });
    expect(watch.statusCode).toBe(200);
    let checked = 0;
    for await (const event of parseSse(watch.body)) {
      expect(event.event).toBe("message");
      checked += expectRequiredPresent("ScriptService_WatchThread", JSON.parse(event.data), "text/event-stream");
    }
    expect(checked).toBeGreaterThan(0);
    const thread = await call("GET", `/v1/script/threads/${created.threadId}`);
    expect(expectRequiredPresent("ScriptService_GetThread", thread)).toBeGreaterThan(5);
    expectRequiredPresent(
      "ScriptService_GetThreadResult",
      await call("GET", `/v1/script/threads/${created.threadId}/result`),
    );
    expectRequiredPresent("ScriptService_ListThreads", await call("GET", "/v1/script/threads"));
  });

  it("secrets and IAM", async () => {
    const secret = { name: "hub", value: { registrySecret: { username: "me", password: "pw" } } };
    expectRequiredPresent("SecretService_CreateSecret", await call("POST", "/v1/compute/secrets", secret));
    expectRequiredPresent("SecretService_GetSecret", await call("GET", "/v1/compute/secrets/hub"));
    expectRequiredPresent("SecretService_ListSecrets", await call("GET", "/v1/compute/secrets"));
    expectRequiredPresent("IamService_GetOrganization", await call("GET", `/v1/iam/orgs/${acme.id}`));
    expect(
      expectRequiredPresent("IamService_ListApiKeys", await call("GET", `/v1/iam/orgs/${acme.id}/api-keys`)),
    ).toBeGreaterThan(0);
  });
});
