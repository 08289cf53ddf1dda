import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { envVars, scriptEnvVars, threads } from "./script-schema.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../crypto/secret-box.js";
import { openThreadEnv, sealPlaintextEnvValues, sealThreadEnv } from "./env-sealing.js";
import { createEnvStore, type EnvStore } from "./env-store.js";

const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";
const newBox = () => createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
const box = newBox();

let database: TestDatabase;
let store: EnvStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createEnvStore(database.db, box);
});
afterAll(() => database.close());

const secret = () => `sk_live_${randomBytes(12).toString("hex")}`;

/** Every row of both tables for an organization, each as the database's own text of the whole row. */
async function rowsAsText(orgId: string): Promise<string[]> {
  const result = await database.db.execute(
    sql`select t::text as row from env_vars t where org_id = ${orgId} union all select t::text from script_env_vars t where org_id = ${orgId}`,
  );
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { row: string }[];
  return rows.map((r) => r.row);
}

async function internalError(work: () => Promise<unknown>): Promise<ConnectError> {
  const error = await work().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConnectError);
  expect((error as ConnectError).code).toBe(Code.Internal);
  return error as ConnectError;
}

describe(`environment values at rest (${engine})`, () => {
  it("stores no value in clear, through every write", async () => {
    const org = await database.createOrganization();
    const [set, imported, overlay, seeded] = [secret(), secret(), secret(), secret()];
    await store.setEnvVar(org, "SET", set);
    await store.importEnvVars(org, { IMPORTED: imported });
    await store.updateScriptEnv(org, "etl", { set: { OVERLAY: overlay }, delete: [] });
    await store.updateScriptEnv(org, "etl", { set: { SEEDED: seeded }, delete: [] });
    const rows = await rowsAsText(org);
    expect(rows).toHaveLength(4);
    for (const value of [set, imported, overlay, seeded]) {
      for (const row of rows) {
        expect(row).not.toContain(value);
        expect(row).not.toContain(Buffer.from(value).toString("hex"));
      }
    }
    expect(await store.getEnvVar(org, "SET")).toBe(set);
    expect(await store.listEnvVars(org)).toEqual([
      { key: "IMPORTED", value: imported },
      { key: "SET", value: set },
    ]);
    expect(await store.getScriptEnv(org, "etl")).toEqual([
      { key: "OVERLAY", value: overlay },
      { key: "SEEDED", value: seeded },
    ]);
  });

  it("binds a sealed value to its organization, key and script: copied elsewhere it does not open", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    const value = secret();
    await store.setEnvVar(orgA, "TOKEN", value);
    await store.setEnvVar(orgA, "OTHER", "other");
    await store.updateScriptEnv(orgA, "one", { set: { TOKEN: value }, delete: [] });
    await store.updateScriptEnv(orgA, "two", { set: { TOKEN: "two" }, delete: [] });
    const [tenantRow] = await database.db
      .select()
      .from(envVars)
      .where(and(eq(envVars.orgId, orgA), eq(envVars.key, "TOKEN")));
    const [overlayRow] = await database.db
      .select()
      .from(scriptEnvVars)
      .where(and(eq(scriptEnvVars.orgId, orgA), eq(scriptEnvVars.scriptName, "one")));

    // The row moved to another organization.
    await database.db.insert(envVars).values({ orgId: orgB, key: "TOKEN", sealedValue: tenantRow!.sealedValue });
    const moved = await internalError(() => store.getEnvVar(orgB, "TOKEN"));
    expect(moved.rawMessage).toMatch(/^environment variable "TOKEN" cannot be opened/);
    expect(moved.rawMessage).not.toContain(value);
    await internalError(() => store.listEnvVars(orgB));

    // The value copied to another key of the same organization.
    await database.db
      .update(envVars)
      .set({ sealedValue: tenantRow!.sealedValue })
      .where(and(eq(envVars.orgId, orgA), eq(envVars.key, "OTHER")));
    await internalError(() => store.getEnvVar(orgA, "OTHER"));

    // An overlay value copied to another script, and to the tenant variables.
    await database.db
      .update(scriptEnvVars)
      .set({ sealedValue: overlayRow!.sealedValue })
      .where(and(eq(scriptEnvVars.orgId, orgA), eq(scriptEnvVars.scriptName, "two")));
    expect((await internalError(() => store.getScriptEnv(orgA, "two"))).rawMessage).toMatch(
      /^"TOKEN" of script "two"'s environment cannot be opened/,
    );
    await database.db
      .update(envVars)
      .set({ sealedValue: overlayRow!.sealedValue })
      .where(and(eq(envVars.orgId, orgA), eq(envVars.key, "TOKEN")));
    await internalError(() => store.getEnvVar(orgA, "TOKEN"));

    // Where it belongs, it still opens; a write replaces what does not open.
    expect(await store.getScriptEnv(orgA, "one")).toEqual([{ key: "TOKEN", value }]);
    await store.setEnvVar(orgB, "TOKEN", "b");
    expect(await store.getEnvVar(orgB, "TOKEN")).toBe("b");
  });

  it("still refuses a copied value that this process has opened before", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    const value = secret();
    await store.setEnvVar(orgA, "TOKEN", value);
    expect(await store.getEnvVar(orgA, "TOKEN")).toBe(value);
    const [row] = await database.db
      .select()
      .from(envVars)
      .where(and(eq(envVars.orgId, orgA), eq(envVars.key, "TOKEN")));
    await database.db.insert(envVars).values({ orgId: orgB, key: "TOKEN", sealedValue: row!.sealedValue });
    await store.setEnvVar(orgA, "OTHER", "other");
    await database.db
      .update(envVars)
      .set({ sealedValue: row!.sealedValue })
      .where(and(eq(envVars.orgId, orgA), eq(envVars.key, "OTHER")));
    await internalError(() => store.getEnvVar(orgB, "TOKEN"));
    await internalError(() => store.getEnvVar(orgA, "OTHER"));
    expect(await store.getEnvVar(orgA, "TOKEN")).toBe(value);
  });

  it("does not open with another server key", async () => {
    const org = await database.createOrganization();
    await store.setEnvVar(org, "TOKEN", secret());
    expect(
      (await internalError(() => createEnvStore(database.db, newBox()).getEnvVar(org, "TOKEN"))).rawMessage,
    ).toMatch(/secret key/);
  });

  it("reads only sealed values: a plaintext row is refused, not served", async () => {
    const org = await database.createOrganization();
    await database.db.insert(envVars).values({ orgId: org, key: "LEGACY", plaintextValue: "clear" });
    await database.db
      .insert(scriptEnvVars)
      .values({ orgId: org, scriptName: "etl", key: "LEGACY", plaintextValue: "clear" });
    expect((await internalError(() => store.getEnvVar(org, "LEGACY"))).rawMessage).toBe(
      'environment variable "LEGACY" is not sealed yet; restart the server to seal it',
    );
    await internalError(() => store.listEnvVars(org));
    await internalError(() => store.getScriptEnv(org, "etl"));
  });

  it("keeps a row sealed or plaintext, never both: a write from before sealing fails on a sealed row", async () => {
    const org = await database.createOrganization();
    await store.setEnvVar(org, "TOKEN", "sealed");
    await expect(
      database.db.update(envVars).set({ plaintextValue: "clear" }).where(eq(envVars.orgId, org)),
    ).rejects.toThrow();
    await expect(database.db.insert(envVars).values({ orgId: org, key: "NEITHER" })).rejects.toThrow();
    expect(await store.getEnvVar(org, "TOKEN")).toBe("sealed");
  });
});

describe(`sealing the values stored before sealing (${engine})`, () => {
  it("seals every plaintext row once, clears the plaintext, and finds nothing the second time", async () => {
    const org = await database.createOrganization();
    const values = { TENANT: secret(), EMPTY_OVERLAY: "", OVERLAY: secret() };
    await database.db.insert(envVars).values({ orgId: org, key: "TENANT", plaintextValue: values.TENANT });
    await database.db.insert(scriptEnvVars).values([
      { orgId: org, scriptName: "etl", key: "OVERLAY", plaintextValue: values.OVERLAY },
      { orgId: org, scriptName: "etl", key: "EMPTY_OVERLAY", plaintextValue: values.EMPTY_OVERLAY },
    ]);
    await store.setEnvVar(org, "ALREADY", "sealed");

    // Other tests' organizations share the database: count this one's rows through the total.
    const sealed = await sealPlaintextEnvValues(database.db, box);
    expect(sealed).toBeGreaterThanOrEqual(3);
    expect(await sealPlaintextEnvValues(database.db, box)).toBe(0);

    const rows = await database.db.select().from(envVars).where(eq(envVars.orgId, org));
    expect(rows.map((row) => [row.key, row.plaintextValue, row.sealedValue instanceof Uint8Array])).toEqual(
      expect.arrayContaining([
        ["TENANT", null, true],
        ["ALREADY", null, true],
      ]),
    );
    for (const row of await rowsAsText(org)) expect(row).not.toContain(values.TENANT);
    expect(await store.getEnvVar(org, "TENANT")).toBe(values.TENANT);
    expect(await store.getEnvVar(org, "ALREADY")).toBe("sealed");
    expect(await store.getScriptEnv(org, "etl")).toEqual([
      { key: "EMPTY_OVERLAY", value: "" },
      { key: "OVERLAY", value: values.OVERLAY },
    ]);
  });

  it("seals each row once when servers start together", async () => {
    const org = await database.createOrganization();
    await database.db
      .insert(envVars)
      .values(Array.from({ length: 50 }, (_, i) => ({ orgId: org, key: `K${i}`, plaintextValue: `v${i}` })));
    const counts = await Promise.all([
      sealPlaintextEnvValues(database.db, box),
      sealPlaintextEnvValues(database.db, box),
      sealPlaintextEnvValues(database.db, box),
    ]);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(50);
    expect(await store.getEnvVar(org, "K49")).toBe("v49");
  });
});

describe(`a thread's environment at rest (${engine})`, () => {
  it("opens only for the thread it was sealed for, with the key it was sealed with", () => {
    const slot = { orgId: "6f1d0c5e-0000-4000-8000-000000000001", threadId: "6f1d0c5e-0000-4000-8000-0000000000aa" };
    const env = { TOKEN: secret(), REGION: "eu" };
    const sealed = sealThreadEnv(box, slot, env)!;
    expect(Buffer.from(sealed).toString("latin1")).not.toContain(env.TOKEN);
    expect(openThreadEnv(box, slot, sealed)).toEqual(env);
    expect(() => openThreadEnv(box, { ...slot, threadId: "6f1d0c5e-0000-4000-8000-0000000000bb" }, sealed)).toThrow(
      /cannot be opened/,
    );
    expect(() => openThreadEnv(newBox(), slot, sealed)).toThrow(/cannot be opened/);
    expect(sealThreadEnv(box, slot, {})).toBeNull();
    expect(openThreadEnv(box, slot, null)).toEqual({});
  });

  it("seals a running thread's plaintext environment at start-up and clears an ended one's", async () => {
    const org = await database.createOrganization();
    const token = secret();
    const base = { orgId: org, scriptName: "etl", scriptVersion: 1, input: {}, metadata: {}, env: { TOKEN: token } };
    const [running, ended] = await database.db
      .insert(threads)
      .values([
        { ...base, status: "running" as const },
        { ...base, status: "completed" as const },
      ])
      .returning({ id: threads.id });
    await sealPlaintextEnvValues(database.db, box);
    const rows = await database.db.select().from(threads).where(eq(threads.orgId, org));
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(running!.id)!.env).toEqual({});
    expect(openThreadEnv(box, { orgId: org, threadId: running!.id }, byId.get(running!.id)!.sealedEnv)).toEqual({
      TOKEN: token,
    });
    expect([byId.get(ended!.id)!.env, byId.get(ended!.id)!.sealedEnv]).toEqual([{}, null]);
    const text = await database.db.execute(sql`select t::text as row from threads t where org_id = ${org}`);
    expect(JSON.stringify(text)).not.toContain(token);
  });
});
