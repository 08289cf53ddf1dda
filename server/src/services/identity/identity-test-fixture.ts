import { randomBytes } from "node:crypto";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox, SECRET_KEY_BYTES, type SecretBox } from "../../crypto/secret-box.js";
import { createPoolStore, poolRefOf, type PoolRecord, type PoolRef, type PoolStore } from "./pool-store.js";

/** What the identity store tests share: a migrated database, a secret box, and fresh pools. */
export interface IdentityTestFixture {
  readonly database: TestDatabase;
  readonly box: SecretBox;
  readonly pools: PoolStore;
  /** A pool in an organization of its own. */
  newPool(name?: string): Promise<{ readonly record: PoolRecord; readonly ref: PoolRef }>;
  close(): Promise<void>;
}

export async function openIdentityTestFixture(): Promise<IdentityTestFixture> {
  const database = await openTestDatabase();
  const pools = createPoolStore(database.db);
  return {
    database,
    box: createSecretBox(randomBytes(SECRET_KEY_BYTES)),
    pools,
    async newPool(name = "app") {
      const record = await pools.create(await database.createOrganization(), { name });
      return { record, ref: poolRefOf(record) };
    },
    close: () => database.close(),
  };
}

export const engineName = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";
