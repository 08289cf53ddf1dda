import { randomBytes } from "node:crypto";
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { Code, createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptService } from "../../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { principalKey } from "../../auth/principal.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../crypto/secret-box.js";
import { createNativeToolSource } from "./tools/native-tools.js";
import { createToolRegistry } from "./tools/tool-registry.js";
import { createScriptService } from "./script-handlers.js";
import { failure } from "../../../test/connect-failure.js";

const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";

const box = createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
let database: TestDatabase;
let service: Partial<ScriptServiceImplementation>;
beforeAll(async () => {
  database = await openTestDatabase();
  service = createScriptService({
    db: database.db,
    box,
    version: "1.2.3",
    startedAt: 0,
    tools: createToolRegistry([createNativeToolSource({})]),
  });
});
afterAll(() => database.close());

/** A handler context as the auth interceptor leaves it: the caller's principal set, or none. */
function contextFor(method: DescMethodUnary, orgId?: string): HandlerContext {
  const contextValues = createContextValues();
  if (orgId) contextValues.set(principalKey, { orgId, orgName: "org", keyId: "key", roles: new Set(["admin"]) });
  return createHandlerContext({
    service: ScriptService,
    method,
    protocolName: "connect",
    requestMethod: "POST",
    url: `http://localhost/${ScriptService.typeName}/${method.name}`,
    contextValues,
  });
}

type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: HandlerContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/**
 * Calls one unary method the way the router does: the request built as a full message, the answer
 * read back as one (so defaults the handler left out are filled, as on the wire).
 */
async function call<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: UnaryHandler<I, O> | undefined,
  init: MessageInitShape<I>,
  orgId?: string,
): Promise<MessageShape<O>> {
  if (!handler) throw new Error(`${method.name} is not implemented`);
  return create(method.output, await handler(create(method.input, init), contextFor(method, orgId)));
}

const methods = ScriptService.method;

const minimalScript = "dsl: script/1\nsteps:\n  - id: hello\n    yield: {value: hello}\n";

/**
 * A client of the service for one organization, method by method. An overlay belongs to a
 * published script, so the overlay methods publish their script first (once per name).
 */
function clientFor(orgId: string) {
  const published = new Set<string>();
  const ensurePublished = async (name: string) => {
    if (published.has(name) || !/^[A-Za-z0-9._-]{1,128}$/.test(name)) return;
    await call(methods.createScript, service.createScript, { name, source: minimalScript }, orgId);
    published.add(name);
  };
  return {
    set: (key: string, value: string) => call(methods.setEnvVar, service.setEnvVar, { key, value }, orgId),
    get: (key: string) => call(methods.getEnvVar, service.getEnvVar, { key }, orgId),
    list: () => call(methods.listEnvVars, service.listEnvVars, {}, orgId),
    delete: (key: string) => call(methods.deleteEnvVar, service.deleteEnvVar, { key }, orgId),
    import: (vars: Record<string, string>) => call(methods.importEnvVars, service.importEnvVars, { vars }, orgId),
    getScript: async (name: string) => {
      await ensurePublished(name);
      return call(methods.getScriptEnv, service.getScriptEnv, { name }, orgId);
    },
    updateScript: async (name: string, set: Record<string, string>, deletions: string[] = []) => {
      await ensurePublished(name);
      return call(methods.updateScriptEnv, service.updateScriptEnv, { name, set, delete: deletions }, orgId);
    },
  };
}

const entries = (response: { vars: readonly { key: string; value: string }[] }) =>
  response.vars.map(({ key, value }) => ({ key, value }));

describe("HealthCheck", () => {
  it("answers ok, the version and whole seconds of uptime, without a principal", async () => {
    const probe = createScriptService({
      db: database.db,
      box,
      version: "9.9.9",
      startedAt: 1_000,
      now: () => 6_999,
      tools: createToolRegistry([]),
    });
    const response = await call(methods.healthCheck, probe.healthCheck, {});
    expect(response).toMatchObject({ status: "ok", version: "9.9.9", uptimeSeconds: 5n });
  });

  it("never reports negative uptime when the clock steps back", async () => {
    const probe = createScriptService({
      db: database.db,
      box,
      version: "1",
      startedAt: 10_000,
      now: () => 9_000,
      tools: createToolRegistry([]),
    });
    expect((await call(methods.healthCheck, probe.healthCheck, {})).uptimeSeconds).toBe(0n);
  });
});

describe(`tenant environment variables (${engine})`, () => {
  it("sets, reads, lists sorted, deletes, and deleting again succeeds", async () => {
    const client = clientFor(await database.createOrganization());
    expect(await client.set("b", "2")).toStrictEqual(create(methods.setEnvVar.output, { key: "b" }));
    await client.set("A", "1");
    await client.set("b", "3");
    expect(await client.get("b")).toStrictEqual(create(methods.getEnvVar.output, { key: "b", value: "3" }));
    expect(entries(await client.list())).toEqual([
      { key: "A", value: "1" },
      { key: "b", value: "3" },
    ]);
    expect(await client.delete("b")).toStrictEqual(create(methods.deleteEnvVar.output));
    expect(await client.delete("b")).toStrictEqual(create(methods.deleteEnvVar.output));
    expect(entries(await client.list())).toEqual([{ key: "A", value: "1" }]);
  });

  it("answers NOT_FOUND naming the key that is not set", async () => {
    const client = clientFor(await database.createOrganization());
    const error = await failure(client.get("MISSING"));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toContain('"MISSING"');
  });

  it("imports by overwriting and adding, and counts what it imported", async () => {
    const client = clientFor(await database.createOrganization());
    await client.set("KEEP", "k");
    await client.set("OVER", "old");
    expect(await client.import({ OVER: "new", ADD: "a", MORE: "m" })).toStrictEqual(
      create(methods.importEnvVars.output, { count: 3 }),
    );
    expect(entries(await client.list())).toEqual([
      { key: "ADD", value: "a" },
      { key: "KEEP", value: "k" },
      { key: "MORE", value: "m" },
      { key: "OVER", value: "new" },
    ]);
  });

  it.each([
    ["SetEnvVar with a bad key", (c: Client) => c.set("1abc", "v"), /^key: "1abc" is not a valid variable name/],
    ["SetEnvVar without a key", (c: Client) => c.set("", "v"), /^key is required$/],
    ["SetEnvVar without a value", (c: Client) => c.set("A", ""), /^value is required$/],
    ["SetEnvVar with a value over 64 KiB", (c: Client) => c.set("A", "x".repeat(65_537)), /^value is 65537 bytes/],
    ["GetEnvVar with a bad key", (c: Client) => c.get("x y"), /^key: "x y" is not a valid variable name/],
    ["DeleteEnvVar without a key", (c: Client) => c.delete(""), /^key is required$/],
    ["ImportEnvVars with nothing", (c: Client) => c.import({}), /^vars is required/],
    [
      "ImportEnvVars with a bad key",
      (c: Client) => c.import({ GOOD: "1", "1abc": "2" }),
      /^vars\["1abc"\] is not a valid variable name/,
    ],
    [
      "ImportEnvVars with an empty value",
      (c: Client) => c.import({ GOOD: "1", EMPTY: "" }),
      /^vars\["EMPTY"\] is required$/,
    ],
  ])("refuses %s with INVALID_ARGUMENT naming the field", async (_name, attempt, message) => {
    const client = clientFor(await database.createOrganization());
    const error = await failure(attempt(client));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(message);
    expect(entries(await client.list())).toEqual([]);
  });

  it("treats __proto__ as an ordinary variable name in maps", async () => {
    const client = clientFor(await database.createOrganization());
    expect((await client.import(Object.fromEntries([["__proto__", "p"]]))).count).toBe(1);
    await client.updateScript("etl", Object.fromEntries([["__proto__", ""]]));
    expect(entries(await client.list())).toEqual([{ key: "__proto__", value: "p" }]);
    expect(entries(await client.getScript("etl"))).toEqual([{ key: "__proto__", value: "" }]);
  });

  it("imports all or nothing: one bad entry leaves every variable as it was", async () => {
    const client = clientFor(await database.createOrganization());
    await client.set("A", "before");
    await failure(client.import({ A: "after", B: "b", "bad key": "c" }));
    expect(entries(await client.list())).toEqual([{ key: "A", value: "before" }]);
  });

  it("keeps organizations apart", async () => {
    const orgA = clientFor(await database.createOrganization());
    const orgB = clientFor(await database.createOrganization());
    await orgA.set("SECRET_URL", "a");
    expect((await failure(orgB.get("SECRET_URL"))).code).toBe(Code.NotFound);
    expect(entries(await orgB.list())).toEqual([]);
    await orgB.delete("SECRET_URL");
    await orgB.import({ SECRET_URL: "b" });
    expect((await orgA.get("SECRET_URL")).value).toBe("a");
    expect((await orgB.get("SECRET_URL")).value).toBe("b");
  });

  it("answers UNAUTHENTICATED when no principal reached the handler", async () => {
    const error = await failure(call(methods.listEnvVars, service.listEnvVars, {}));
    expect(error.code).toBe(Code.Unauthenticated);
  });
});

describe(`script environment overlays (${engine})`, () => {
  it("answers an empty overlay for a published script that has none, and NOT_FOUND for an unknown script", async () => {
    const orgId = await database.createOrganization();
    expect(entries(await clientFor(orgId).getScript("never-configured"))).toEqual([]);
    const unknown = await failure(call(methods.getScriptEnv, service.getScriptEnv, { name: "nothing-here" }, orgId));
    expect([unknown.code, unknown.rawMessage]).toEqual([Code.NotFound, 'script "nothing-here" not found']);
    const update = await failure(
      call(methods.updateScriptEnv, service.updateScriptEnv, { name: "nothing-here", set: { A: "1" } }, orgId),
    );
    expect(update.code).toBe(Code.NotFound);
  });

  it("upserts, keeps empty values, ignores absent deletions and returns the full overlay sorted", async () => {
    const client = clientFor(await database.createOrganization());
    expect(entries(await client.updateScript("etl", { b: "1", A: "", C: "3" }))).toEqual([
      { key: "A", value: "" },
      { key: "C", value: "3" },
      { key: "b", value: "1" },
    ]);
    const updated = await client.updateScript("etl", { C: "", D: "4" }, ["b", "NEVER_SET"]);
    expect(entries(updated)).toEqual([
      { key: "A", value: "" },
      { key: "C", value: "" },
      { key: "D", value: "4" },
    ]);
    expect(entries(await client.getScript("etl"))).toEqual(entries(updated));
    expect(entries(await client.updateScript("etl", {}))).toEqual(entries(updated));
  });

  it.each([
    ["GetScriptEnv without a name", (c: Client) => c.getScript(""), /^name is required$/],
    ["UpdateScriptEnv without a name", (c: Client) => c.updateScript("", { A: "1" }), /^name is required$/],
    [
      "UpdateScriptEnv with a bad set key",
      (c: Client) => c.updateScript("etl", { "x y": "1" }),
      /^set\["x y"\] is not a valid variable name/,
    ],
    [
      "UpdateScriptEnv with a set value over 64 KiB",
      (c: Client) => c.updateScript("etl", { A: "x".repeat(65_537) }),
      /^set\["A"\] is 65537 bytes/,
    ],
    [
      "UpdateScriptEnv with a bad delete key",
      (c: Client) => c.updateScript("etl", {}, ["1abc"]),
      /^delete\[0\]: "1abc" is not a valid variable name/,
    ],
    [
      "UpdateScriptEnv with a key both set and deleted",
      (c: Client) => c.updateScript("etl", { A: "1" }, ["B", "A"]),
      /^delete\[1\]: "A" is also in set/,
    ],
  ])("refuses %s with INVALID_ARGUMENT naming the field", async (_name, attempt, message) => {
    const client = clientFor(await database.createOrganization());
    await client.updateScript("etl", { KEPT: "k" });
    const error = await failure(attempt(client));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(message);
    expect(entries(await client.getScript("etl"))).toEqual([{ key: "KEPT", value: "k" }]);
  });

  it("keeps organizations apart", async () => {
    const orgA = clientFor(await database.createOrganization());
    const orgB = clientFor(await database.createOrganization());
    await orgA.updateScript("etl", { A: "a" });
    expect(entries(await orgB.getScript("etl"))).toEqual([]);
    expect(entries(await orgB.updateScript("etl", { B: "b" }, ["A"]))).toEqual([{ key: "B", value: "b" }]);
    expect(entries(await orgA.getScript("etl"))).toEqual([{ key: "A", value: "a" }]);
  });
});

type Client = ReturnType<typeof clientFor>;
