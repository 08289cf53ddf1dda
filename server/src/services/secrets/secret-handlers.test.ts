import { randomBytes } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateSecretRequestSchema,
  CreateSecretResponseSchema,
  DeleteSecretRequestSchema,
  DeleteSecretResponseSchema,
  GetSecretRequestSchema,
  GetSecretResponseSchema,
  ListSecretsRequestSchema,
  ListSecretsResponseSchema,
  SecretService,
} from "../../../../gen/platform/compute/v1/secret_service_pb.js";
import type { SecretServiceImplementation } from "../../../../gen/platform/compute/v1/secret_service_server.js";
import { principalKey } from "../../auth/principal.js";
import { secrets } from "./secrets-schema.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { createSecretService } from "./secret-handlers.js";

let database: TestDatabase;
let service: SecretServiceImplementation;
beforeAll(async () => {
  database = await openTestDatabase();
  service = createSecretService({ db: database.db, box: createSecretBox(new Uint8Array(randomBytes(32))) });
});
afterAll(() => database.close());

function contextOf(orgId: string | undefined): HandlerContext {
  const contextValues = createContextValues();
  if (orgId) contextValues.set(principalKey, { orgId, orgName: "test", keyId: "key", roles: new Set(["admin"]) });
  return createHandlerContext({
    service: SecretService,
    method: SecretService.method.createSecret,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/platform.compute.v1.SecretService/CreateSecret",
    contextValues,
  });
}

/** A caller in an organization of its own, with the four methods bound to its context, answering full messages. */
async function caller() {
  const orgId = await database.createOrganization();
  const context = contextOf(orgId);
  return {
    orgId,
    createSecret: async (init: MessageInitShape<typeof CreateSecretRequestSchema>) =>
      create(CreateSecretResponseSchema, await service.createSecret(create(CreateSecretRequestSchema, init), context)),
    getSecret: async (name: string) =>
      create(GetSecretResponseSchema, await service.getSecret(create(GetSecretRequestSchema, { name }), context)),
    listSecrets: async () =>
      create(ListSecretsResponseSchema, await service.listSecrets(create(ListSecretsRequestSchema), context)),
    deleteSecret: async (name: string) =>
      create(
        DeleteSecretResponseSchema,
        await service.deleteSecret(create(DeleteSecretRequestSchema, { name }), context),
      ),
  };
}

const gitValue = (token: string) => ({ value: { case: "gitSecret" as const, value: { username: "deployer", token } } });
const registryValue = (password: string, serverAddress = "") => ({
  value: { case: "registrySecret" as const, value: { username: "robot", password, serverAddress } },
});

async function connectErrorOf(work: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await work();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

describe(`secret service (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("creates, reads back in cleartext, lists metadata only and deletes", async () => {
    const org = await caller();
    const created = await org.createSecret({ name: "git-deploy", value: gitValue("ghp_first") });
    expect(created.metadata).toMatchObject({ name: "git-deploy", type: "git_secret" });
    expect(typeof created.metadata!.createdAtMs).toBe("bigint");
    expect(created.metadata!.updatedAtMs).toBe(created.metadata!.createdAtMs);
    expect(Number(created.metadata!.createdAtMs)).toBeGreaterThan(Date.now() - 60_000);

    const read = await org.getSecret("git-deploy");
    expect(read.name).toBe("git-deploy");
    expect(read.value!.value).toEqual({
      case: "gitSecret",
      value: expect.objectContaining({ username: "deployer", token: "ghp_first" }),
    });
    expect(read.metadata).toEqual(created.metadata);

    await org.createSecret({ name: "registry", value: registryValue("pw", "registry.example.com") });
    const listed = await org.listSecrets();
    expect(listed.secrets!.map((entry) => [entry.name, entry.type])).toEqual([
      ["git-deploy", "git_secret"],
      ["registry", "registry_secret"],
    ]);
    expect(
      JSON.stringify(listed, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value)),
    ).not.toMatch(/ghp_first|"pw"|deployer|robot/);

    expect((await org.deleteSecret("git-deploy")).deleted).toBe(true);
    expect((await org.deleteSecret("git-deploy")).deleted).toBe(false);
    expect((await org.deleteSecret("never-existed")).deleted).toBe(false);
    const missing = await connectErrorOf(() => org.getSecret("git-deploy"));
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).toContain('"git-deploy"');
  });

  it("keeps a registry login's server address, empty meaning the default registry", async () => {
    const org = await caller();
    await org.createSecret({ name: "hub", value: registryValue("pw-hub") });
    await org.createSecret({ name: "private", value: registryValue("pw-private", "registry.example.com:5000") });
    expect((await org.getSecret("hub")).value!.value).toEqual({
      case: "registrySecret",
      value: expect.objectContaining({ username: "robot", password: "pw-hub", serverAddress: "" }),
    });
    expect((await org.getSecret("private")).value!.value).toMatchObject({
      value: { serverAddress: "registry.example.com:5000" },
    });
  });

  it("rotates a slot in place: created_at stays, updated_at moves forward, the new value and type win", async () => {
    const org = await caller();
    const first = (await org.createSecret({ name: "creds", value: gitValue("old-token") })).metadata!;
    const second = (await org.createSecret({ name: "creds", value: gitValue("new-token") })).metadata!;
    expect(second.createdAtMs).toBe(first.createdAtMs);
    expect(second.updatedAtMs).toBeGreaterThan(first.updatedAtMs);
    expect((await org.getSecret("creds")).value!.value).toMatchObject({
      case: "gitSecret",
      value: { token: "new-token" },
    });

    const third = (await org.createSecret({ name: "creds", value: registryValue("pw") })).metadata!;
    expect(third).toMatchObject({ type: "registry_secret", createdAtMs: first.createdAtMs });
    expect(third.updatedAtMs).toBeGreaterThan(second.updatedAtMs);
    expect(await org.listSecrets()).toMatchObject({ secrets: [{ name: "creds", type: "registry_secret" }] });
  });

  it("treats a repeated create with the same value as a retry, not a rotation", async () => {
    const org = await caller();
    const first = (await org.createSecret({ name: "same", value: registryValue("pw", "r.example.com") })).metadata!;
    const again = (await org.createSecret({ name: "same", value: registryValue("pw", "r.example.com") })).metadata!;
    expect(again).toEqual(first);
    const changed = (await org.createSecret({ name: "same", value: registryValue("pw", "other.example.com") }))
      .metadata!;
    expect(changed.updatedAtMs).toBeGreaterThan(first.updatedAtMs);
  });

  it("lets concurrent creates of one new name all succeed, one value winning", async () => {
    const org = await caller();
    const tokens = ["t1", "t2", "t3", "t4", "t5"];
    await Promise.all(tokens.map((token) => org.createSecret({ name: "raced", value: gitValue(token) })));
    const read = await org.getSecret("raced");
    expect(read.value!.value.case).toBe("gitSecret");
    expect(tokens).toContain((read.value!.value.value as { token: string }).token);
  });

  it("keeps organizations apart: another organization cannot read, list, delete or overwrite a slot", async () => {
    const orgA = await caller();
    const orgB = await caller();
    await orgA.createSecret({ name: "prod", value: gitValue("token-of-a") });

    const notFound = await connectErrorOf(() => orgB.getSecret("prod"));
    expect(notFound.code).toBe(Code.NotFound);
    expect((await orgB.listSecrets()).secrets).toEqual([]);
    expect((await orgB.deleteSecret("prod")).deleted).toBe(false);

    await orgB.createSecret({ name: "prod", value: gitValue("token-of-b") });
    expect((await orgA.getSecret("prod")).value!.value).toMatchObject({ value: { token: "token-of-a" } });
    expect((await orgB.getSecret("prod")).value!.value).toMatchObject({ value: { token: "token-of-b" } });
    expect((await orgB.deleteSecret("prod")).deleted).toBe(true);
    expect((await orgA.getSecret("prod")).value!.value).toMatchObject({ value: { token: "token-of-a" } });
  });

  it("stores no cleartext: the row holds only the sealed value", async () => {
    const org = await caller();
    const token = `ghp_${randomBytes(12).toString("hex")}`;
    const password = `pw_${randomBytes(12).toString("hex")}`;
    await org.createSecret({ name: "git", value: gitValue(token) });
    await org.createSecret({ name: "registry", value: registryValue(password, "registry.example.com") });
    const result = await database.db.execute(
      sql`select name, type, sealed_value, encode(sealed_value, 'hex') as hex, encode(sealed_value, 'escape') as escaped from secrets where org_id = ${org.orgId}`,
    );
    const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Record<string, unknown>[];
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const raw = Buffer.from(row.sealed_value as Uint8Array);
      expect(raw[0]).toBe(1);
      for (const clear of [token, password, "registry.example.com"]) {
        expect(raw.includes(Buffer.from(clear))).toBe(false);
        expect(row.hex as string).not.toContain(Buffer.from(clear).toString("hex"));
        expect(row.escaped as string).not.toContain(clear);
      }
    }
  });

  it("refuses a sealed value copied to another slot, without revealing it, and lets a create replace it", async () => {
    const org = await caller();
    await org.createSecret({ name: "source", value: gitValue("copied-token") });
    await org.createSecret({ name: "target", value: gitValue("target-token") });
    const [source] = await database.db
      .select({ sealedValue: secrets.sealedValue })
      .from(secrets)
      .where(and(eq(secrets.orgId, org.orgId), eq(secrets.name, "source")));
    await database.db
      .update(secrets)
      .set({ sealedValue: source!.sealedValue })
      .where(and(eq(secrets.orgId, org.orgId), eq(secrets.name, "target")));

    const error = await connectErrorOf(() => org.getSecret("target"));
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).toContain('"target"');
    expect(error.rawMessage).not.toContain("token");

    await org.createSecret({ name: "target", value: gitValue("copied-token") });
    expect((await org.getSecret("target")).value!.value).toMatchObject({ value: { token: "copied-token" } });
  });

  it("binds a sealed value to its organization: a row moved to another organization does not open there", async () => {
    const orgA = await caller();
    const orgB = await caller();
    await orgA.createSecret({ name: "moved", value: gitValue("token-of-a") });
    await database.db
      .update(secrets)
      .set({ orgId: orgB.orgId })
      .where(and(eq(secrets.orgId, orgA.orgId), eq(secrets.name, "moved")));

    const error = await connectErrorOf(() => orgB.getSecret("moved"));
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).toContain('"moved"');
    expect(error.rawMessage).not.toContain("token-of-a");
    // Rewriting the same value in the new organization is a rotation: the moved value is not taken as its own.
    const before = (await orgB.listSecrets()).secrets[0]!;
    const rewritten = (await orgB.createSecret({ name: "moved", value: gitValue("token-of-a") })).metadata!;
    expect(rewritten.updatedAtMs).toBeGreaterThan(before.updatedAtMs);
    expect((await orgB.getSecret("moved")).value!.value).toMatchObject({ value: { token: "token-of-a" } });
  });

  it("rejects bad input with the field named and the value not repeated", async () => {
    const org = await caller();
    const cases: [MessageInitShape<typeof CreateSecretRequestSchema>, RegExp][] = [
      [{ name: "", value: gitValue("t") }, /^name is required/],
      [{ name: "a".repeat(65), value: gitValue("t") }, /^name must be 1 to 64 characters/],
      [{ name: "has space", value: gitValue("t") }, /^name must be/],
      [{ name: "dots.not.allowed", value: gitValue("t") }, /^name must be/],
      [{ name: "ünïcode", value: gitValue("t") }, /^name must be/],
      [{ name: "ok" }, /^value is required: set exactly one of value.git_secret or value.registry_secret/],
      [{ name: "ok", value: {} }, /^value is required/],
      [
        { name: "ok", value: { value: { case: "gitSecret", value: { token: "secret-token" } } } },
        /^value.git_secret.username is required/,
      ],
      [
        { name: "ok", value: { value: { case: "gitSecret", value: { username: "u" } } } },
        /^value.git_secret.token is required/,
      ],
      [
        { name: "ok", value: { value: { case: "registrySecret", value: { password: "secret-pw" } } } },
        /^value.registry_secret.username is required/,
      ],
      [
        { name: "ok", value: { value: { case: "registrySecret", value: { username: "u" } } } },
        /^value.registry_secret.password is required/,
      ],
    ];
    for (const [request, message] of cases) {
      const error = await connectErrorOf(() => org.createSecret(request));
      expect(error.code, error.rawMessage).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(message);
      expect(error.rawMessage).not.toMatch(/secret-token|secret-pw/);
    }
    expect((await org.listSecrets()).secrets).toEqual([]);

    const longest = "A-z_0".repeat(12) + "9abc";
    expect(longest).toHaveLength(64);
    expect((await org.createSecret({ name: longest, value: gitValue("t") })).metadata!.name).toBe(longest);

    expect((await connectErrorOf(() => org.getSecret("bad/name"))).code).toBe(Code.InvalidArgument);
    expect((await connectErrorOf(() => org.deleteSecret(""))).rawMessage).toBe("name is required");
  });

  it("needs an authenticated caller", async () => {
    const error = await connectErrorOf(async () =>
      service.listSecrets(create(ListSecretsRequestSchema), contextOf(undefined)),
    );
    expect(error.code).toBe(Code.Unauthenticated);
  });
});
