import { eq } from "drizzle-orm";
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../../../crypto/secret-box.js";
import { openTestDatabase, type TestDatabase } from "../../../../../test/test-database.js";
import { CI_SECRET_VALUE_MAX_BYTES, CiSecretInputError } from "./ci-secret-scope.js";
import { createCiSecretStore, type CiSecretStore } from "./ci-secret-store.js";
import { gitCiSecrets } from "./git-ci-secrets-schema.js";

let database: TestDatabase;
let store: CiSecretStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createCiSecretStore(database.db, createSecretBox(new Uint8Array(randomBytes(32))));
});
afterAll(() => database.close());

const org = { kind: "organization" } as const;

describe(`CI secret store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("stores values sealed and lists only names and times", async () => {
    const orgId = await database.createOrganization();
    const created = await store.put(orgId, org, "NPM_TOKEN", "s3cr3t-value");
    expect(created).toEqual({ name: "NPM_TOKEN", createdAt: expect.any(Number), updatedAt: created.createdAt });
    const updated = await store.put(orgId, org, "NPM_TOKEN", "rotated");
    expect(updated.createdAt).toBe(created.createdAt);
    expect(updated.updatedAt).toBeGreaterThan(created.updatedAt);
    await store.put(orgId, org, "A_FIRST", "x");

    const listed = await store.list(orgId, org);
    expect(listed.map((row) => row.name)).toEqual(["A_FIRST", "NPM_TOKEN"]);
    for (const row of listed) expect(Object.keys(row).sort()).toEqual(["createdAt", "name", "updatedAt"]);

    const [stored] = await database.db.select().from(gitCiSecrets).where(eq(gitCiSecrets.orgId, orgId)).limit(1);
    const raw = Buffer.from(stored!.sealedValue).toString("latin1");
    expect(raw).not.toContain("rotated");
    expect(raw).not.toContain("s3cr3t");
  });

  it("keeps scopes apart and resolves the narrowest value for a job", async () => {
    const orgId = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const repo = { kind: "repository", repoId } as const;
    const prod = { kind: "environment", repoId, environment: "prod" } as const;
    await store.put(orgId, org, "TOKEN", "from-org");
    await store.put(orgId, org, "ONLY_ORG", "o");
    await store.put(orgId, repo, "TOKEN", "from-repo");
    await store.put(orgId, prod, "TOKEN", "from-prod");
    expect((await store.list(orgId, repo)).map((row) => row.name)).toEqual(["TOKEN"]);

    expect(Object.fromEntries(await store.resolveForJob(orgId, repoId))).toEqual({ TOKEN: "from-repo", ONLY_ORG: "o" });
    expect(Object.fromEntries(await store.resolveForJob(orgId, repoId, "prod"))).toEqual({
      TOKEN: "from-prod",
      ONLY_ORG: "o",
    });
    expect(Object.fromEntries(await store.resolveForJob(orgId, randomUUID(), "prod"))).toEqual({
      TOKEN: "from-org",
      ONLY_ORG: "o",
    });
    const otherOrg = await database.createOrganization();
    expect((await store.resolveForJob(otherOrg, repoId, "prod")).size).toBe(0);
    expect(await store.delete(otherOrg, repo, "TOKEN")).toBe(false);

    expect(await store.delete(orgId, prod, "TOKEN")).toBe(true);
    expect(await store.delete(orgId, prod, "TOKEN")).toBe(false);
    await store.deleteRepository(orgId, repoId);
    expect(Object.fromEntries(await store.resolveForJob(orgId, repoId, "prod"))).toEqual({
      TOKEN: "from-org",
      ONLY_ORG: "o",
    });
  });

  it("refuses bad names and values naming the field, without echoing the value", async () => {
    const orgId = await database.createOrganization();
    for (const name of ["", "lower", "1ABC", "A-B", "A".repeat(256)]) {
      await expect(store.put(orgId, org, name, "v")).rejects.toThrow(/^name: /);
    }
    await expect(store.put(orgId, org, "A".repeat(255), "v")).resolves.toMatchObject({ name: "A".repeat(255) });
    await expect(store.put(orgId, org, "EMPTY", "")).rejects.toThrow(CiSecretInputError);
    await expect(store.put(orgId, org, "NUMBER", 42)).rejects.toThrow(/^value: /);
    const big = "x".repeat(CI_SECRET_VALUE_MAX_BYTES + 1);
    const error = await store.put(orgId, org, "BIG", big).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CiSecretInputError);
    expect((error as Error).message).not.toContain("xxxx");
    expect(await store.list(orgId, org)).toHaveLength(1);
  });
});
