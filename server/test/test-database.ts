import { randomBytes, randomUUID } from "node:crypto";
import postgres from "postgres";
import { openDatabase, type Database, type DatabaseHandle } from "../src/db/database.js";
import { migrateDatabase } from "../src/db/migrate.js";
import { organizations } from "../src/auth/auth-schema.js";
import { gitRepositories } from "../src/services/git/git-schema.js";

/**
 * A migrated, empty database for one test file: the embedded PGlite in memory, or, when
 * TEST_DATABASE_URL is set, a fresh database created on that PostgreSQL server and dropped after.
 * The same store tests thus run against both engines.
 */
export interface TestDatabase {
  readonly db: Database;
  /** The handle itself, for what goes beyond queries (LISTEN/NOTIFY). */
  readonly handle: DatabaseHandle;
  readonly kind: "embedded" | "postgres";
  /** The PostgreSQL database's URL, for a second connection pool as another process has; undefined when embedded. */
  readonly url: string | undefined;
  /** Creates an organization and returns its id: each test works in organizations of its own. */
  createOrganization(name?: string): Promise<string>;
  /** A git repository row of the organization (no repository on disk), for tables that refer to one. */
  createGitRepository(orgId: string): Promise<string>;
  close(): Promise<void>;
}

export async function openTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  let databaseUrl: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  if (serverUrl) {
    const name = `test_${randomBytes(6).toString("hex")}`;
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    drop = async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    };
  }
  const handle = await openDatabase({ dataDir: "memory://", databaseUrl, maxConnections: 4 });
  await migrateDatabase(handle, () => {});
  return {
    db: handle.db,
    handle,
    kind: handle.kind,
    url: databaseUrl,
    async createOrganization(name = `org-${randomBytes(4).toString("hex")}`) {
      const [org] = await handle.db.insert(organizations).values({ name }).returning({ id: organizations.id });
      return org!.id;
    },
    async createGitRepository(orgId) {
      const id = randomUUID();
      await handle.db.insert(gitRepositories).values({ id, orgId, name: `repo-${id}` });
      return id;
    },
    async close() {
      await handle.close();
      await drop?.();
    },
  };
}
