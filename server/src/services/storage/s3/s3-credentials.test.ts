import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { authenticate } from "../../../auth/auth-interceptor.js";
import { apiKeys } from "../../../auth/auth-schema.js";
import { createCredentialCache } from "../../../auth/credential-cache.js";
import { followCredentialChanges } from "../../../auth/credential-changes.js";
import { deriveS3SecretAccessKey } from "../../../auth/s3-secret.js";
import { createSecretBox } from "../../../crypto/secret-box.js";
import { openDatabase } from "../../../db/database.js";
import { createIamStore } from "../../iam/iam-store.js";
import { createS3Credentials, type S3Credential, type S3Credentials } from "./s3-credentials.js";

let database: TestDatabase;
let stop: () => Promise<void>;
let credentials: S3Credentials;
const box = createSecretBox(randomBytes(32));

beforeAll(async () => {
  database = await openTestDatabase();
  const cache = createCredentialCache<S3Credential>();
  stop = await followCredentialChanges(database.handle, cache);
  credentials = createS3Credentials({ db: database.db, box, cache });
});
afterAll(async () => {
  await stop();
  await database.close();
});

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: { code?: string }) => error.code ?? String(error),
  );

describe(`S3 credentials (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("resolves a key issued with the box to its organization, roles and derived secret", async () => {
    const orgId = await database.createOrganization();
    const issued = await createIamStore(database.db, { box }).createApiKey(orgId, {
      name: "k",
      roles: ["data.viewer"],
      expiresAt: 0,
    });
    const caller = await credentials.resolve(issued.key.id);
    expect(caller.secretAccessKey).toBe(deriveS3SecretAccessKey(issued.secret));
    expect([caller.principal.orgId, [...caller.principal.roles]]).toEqual([orgId, ["data.viewer"]]);
    await caller.markUsed();
    const [used] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, issued.key.id));
    expect(Date.now() - used!.lastUsedAt).toBeLessThan(60_000);
    // Cached: the same answer again, and a rotation gives the new secret at once.
    expect((await credentials.resolve(issued.key.id)).secretAccessKey).toBe(caller.secretAccessKey);
    const rotated = await createIamStore(database.db, { box }).rotateApiKey(orgId, issued.key.id);
    expect((await credentials.resolve(issued.key.id)).secretAccessKey).toBe(deriveS3SecretAccessKey(rotated.secret));
  });

  it("fills an older key's secret the first time its bearer secret is verified", async () => {
    const orgId = await database.createOrganization();
    const issued = await createIamStore(database.db).createApiKey(orgId, { name: "old", roles: [], expiresAt: 0 });
    expect(await code(credentials.resolve(issued.key.id))).toBe("InvalidAccessKeyId");
    await authenticate(database.db, `Bearer ${issued.secret}`, undefined, box);
    expect((await credentials.resolve(issued.key.id)).secretAccessKey).toBe(deriveS3SecretAccessKey(issued.secret));
  });

  it("refuses unknown, revoked and expired keys", async () => {
    const orgId = await database.createOrganization();
    const store = createIamStore(database.db, { box });
    expect(await code(credentials.resolve("not-a-uuid"))).toBe("InvalidAccessKeyId");
    expect(await code(credentials.resolve("00000000-0000-4000-8000-000000000000"))).toBe("InvalidAccessKeyId");
    const revoked = await store.createApiKey(orgId, { name: "r", roles: [], expiresAt: 0 });
    expect(await code(credentials.resolve(revoked.key.id))).toBe("ok");
    await store.revokeApiKey(orgId, revoked.key.id);
    expect(await code(credentials.resolve(revoked.key.id))).toBe("InvalidAccessKeyId");
    const expired = await store.createApiKey(orgId, { name: "e", roles: [], expiresAt: Date.now() - 1 });
    expect(await code(credentials.resolve(expired.key.id))).toBe("InvalidAccessKeyId");
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))(
    "stops a revoked key on another process sharing the database, within a second",
    async () => {
      const other = await openDatabase({ dataDir: "memory://", databaseUrl: database.url, maxConnections: 2 });
      const cache = createCredentialCache<S3Credential>();
      const unlisten = await followCredentialChanges(other, cache);
      try {
        const elsewhere = createS3Credentials({ db: other.db, box, cache });
        const orgId = await database.createOrganization();
        const store = createIamStore(database.db, { box });
        const issued = await store.createApiKey(orgId, { name: "shared", roles: [], expiresAt: 0 });
        expect(await code(elsewhere.resolve(issued.key.id))).toBe("ok");
        await store.revokeApiKey(orgId, issued.key.id);
        const start = Date.now();
        while ((await code(elsewhere.resolve(issued.key.id))) === "ok") {
          expect(Date.now() - start).toBeLessThan(1_000);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await unlisten();
        await other.close();
      }
    },
  );
});
