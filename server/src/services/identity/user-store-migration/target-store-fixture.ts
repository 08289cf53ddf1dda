import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import postgres from "postgres";
import type { Database } from "../../../db/database.js";
import { identityUsers } from "../identity-schema.js";
import { connectPostgresUserStore, type UserStoreConnection } from "../postgres-user-store.js";

/**
 * A database for a pool's users in tests: a fresh database on the TEST_DATABASE_URL server, reached
 * through the real connector; without that server, an in-memory PGlite handed in for the URL
 * (`connect`), since no postgres:// URL can reach one.
 */
export interface TargetStoreFixture {
  readonly url: string;
  /** The target's database as the test inspects it (and spoils it). */
  readonly db: Database;
  /** Passed to the services when the URL cannot be reached for real. */
  readonly connect?: (url: string) => UserStoreConnection;
  close(): Promise<void>;
}

export async function openTargetStore(): Promise<TargetStoreFixture> {
  const name = `users_${randomBytes(6).toString("hex")}`;
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const inspector = connectPostgresUserStore(url.toString());
    return {
      url: url.toString(),
      db: inspector.db,
      async close() {
        await inspector.close();
        await admin.unsafe(`drop database if exists ${name} with (force)`);
        await admin.end();
      },
    };
  }
  const client = await PGlite.create();
  const db = drizzle({ client, schema: { identityUsers } }) as unknown as Database;
  const url = `postgres://users:secret@pglite.invalid:5432/${name}`;
  return {
    url,
    db,
    connect: (asked) => {
      if (asked !== url) throw new Error(`no test database at ${asked}`);
      return { db, close: async () => {} };
    },
    close: () => client.close(),
  };
}
