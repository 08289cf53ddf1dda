import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../test/test-database.js";
import { apiKeys, organizations, permissions } from "./auth-schema.js";
import { hashApiKeySecret } from "./api-key-secret.js";
import { ensureOperator, operatorKeyFile, readOperatorKey, systemOrganizationName } from "./operator.js";

let database: TestDatabase;
let parent: string;
beforeAll(async () => {
  database = await openTestDatabase();
  parent = await mkdtemp(join(tmpdir(), "operator-test-"));
});
afterAll(async () => {
  await database.close();
  await rm(parent, { recursive: true, force: true });
});

async function operatorKeyRow(secret: string) {
  const [row] = await database.db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.secretHash, hashApiKeySecret(secret)));
  return row;
}

it(`creates the system organization and an operator key, written with mode 0600 (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, async () => {
  const dataDir = join(parent, "first", "nested");
  await ensureOperator(database.db, dataDir);
  const secret = await readOperatorKey(dataDir);
  expect(secret).toMatch(/^dk_/);
  expect((await stat(operatorKeyFile(dataDir))).mode & 0o777).toBe(0o600);
  const [system] = await database.db.select().from(organizations).where(eq(organizations.name, systemOrganizationName));
  expect(system).toMatchObject({ system: true });
  const key = await operatorKeyRow(secret!);
  expect(key).toMatchObject({ orgId: system!.id, state: "active", name: "operator" });
  const grants = await database.db.select().from(permissions).where(eq(permissions.principal, key!.id));
  expect(grants.map((g) => g.role)).toEqual(["operator"]);
});

it("keeps a valid key on later starts", async () => {
  const dataDir = join(parent, "keep");
  await ensureOperator(database.db, dataDir);
  const first = await readOperatorKey(dataDir);
  await ensureOperator(database.db, dataDir);
  expect(await readOperatorKey(dataDir)).toBe(first);
  const systems = await database.db.select().from(organizations).where(eq(organizations.system, true));
  expect(systems).toHaveLength(1);
});

it("issues a new key when the file is missing or its key no longer works", async () => {
  const dataDir = join(parent, "reissue");
  await ensureOperator(database.db, dataDir);
  const first = (await readOperatorKey(dataDir))!;
  await rm(operatorKeyFile(dataDir));
  await ensureOperator(database.db, dataDir);
  const second = (await readOperatorKey(dataDir))!;
  expect(second).not.toBe(first);

  await database.db
    .update(apiKeys)
    .set({ state: "revoked" })
    .where(eq(apiKeys.secretHash, hashApiKeySecret(second)));
  await ensureOperator(database.db, dataDir);
  const third = (await readOperatorKey(dataDir))!;
  expect(third).not.toBe(second);

  // A key of an ordinary organization in the file is not an operator key.
  const orgId = await database.createOrganization();
  const impostor = `dk_${"A".repeat(43)}`;
  await database.db
    .insert(apiKeys)
    .values({ orgId, name: "x", secretHash: hashApiKeySecret(impostor), secretPrefix: impostor.slice(0, 10) });
  await database.db
    .insert(permissions)
    .values({ orgId, principal: (await operatorKeyRow(impostor))!.id, role: "operator" });
  await writeFile(operatorKeyFile(dataDir), impostor + "\n");
  await ensureOperator(database.db, dataDir);
  const fourth = (await readOperatorKey(dataDir))!;
  expect(fourth).not.toBe(impostor);
  const key = await operatorKeyRow(fourth);
  const [grant] = await database.db
    .select()
    .from(permissions)
    .where(and(eq(permissions.principal, key!.id), eq(permissions.role, "operator")));
  expect(grant).toBeDefined();
});
