import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { and, eq, gt, or, sql } from "drizzle-orm";
import type { Database } from "../db/database.js";
import { apiKeys, organizations, permissions } from "./auth-schema.js";
import { createIamStore } from "../services/iam/iam-store.js";
import { hashApiKeySecret } from "./api-key-secret.js";
import { operatorRole } from "./roles.js";

/**
 * The platform's own organization, which holds the operator key. The underscore keeps the name
 * out of the slug space (`[a-z0-9-]`), so no tenant can ever be created under it; the IAM
 * service hides system organizations altogether.
 */
export const systemOrganizationName = "_platform";

/** Where the operator secret lives: admin commands read it to call a running server. */
export const operatorKeyFile = (dataDir: string) => join(dataDir, "operator.key");

/**
 * Makes sure the operator credential exists and `<dataDir>/operator.key` (mode 0600) holds a
 * valid secret of it. The first start creates the system organization and the key; later starts
 * keep a valid file and issue a new key when the file is missing or names a key the database no
 * longer accepts (for example a fresh DATABASE_URL under an old data directory). Older operator
 * keys are left alone: replicas sharing one PostgreSQL each keep an operator key in their own
 * data directory.
 */
export async function ensureOperator(db: Database, dataDir: string): Promise<void> {
  const orgId = await systemOrganizationId(db);
  const file = operatorKeyFile(dataDir);
  const current = await readOperatorKey(dataDir);
  if (current !== undefined && (await isValidOperatorKey(db, orgId, current))) {
    await chmod(file, 0o600);
    return;
  }
  const { secret } = await createIamStore(db).createApiKey(orgId, {
    name: "operator",
    roles: [operatorRole],
    expiresAt: 0,
  });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Written aside then renamed, so a reader never sees a half-written secret.
  const partial = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(partial, `${secret}\n`, { mode: 0o600 });
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

/** The operator secret from the data directory, or undefined when there is no file. */
export async function readOperatorKey(dataDir: string): Promise<string | undefined> {
  try {
    const text = (await readFile(operatorKeyFile(dataDir), "utf8")).trim();
    return text === "" ? undefined : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Creates the system organization once; concurrent starts on one PostgreSQL agree on one row. */
async function systemOrganizationId(db: Database): Promise<string> {
  await db
    .insert(organizations)
    .values({ name: systemOrganizationName, displayName: "Platform operator", system: true })
    .onConflictDoNothing({ target: organizations.name });
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.name, systemOrganizationName));
  return row!.id;
}

async function isValidOperatorKey(db: Database, orgId: string, secret: string): Promise<boolean> {
  const now = Date.now();
  const rows = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .innerJoin(
      permissions,
      and(
        eq(permissions.principal, sql`${apiKeys.id}::text`),
        eq(permissions.orgId, orgId),
        eq(permissions.role, operatorRole),
      ),
    )
    .where(
      and(
        eq(apiKeys.secretHash, hashApiKeySecret(secret)),
        eq(apiKeys.orgId, orgId),
        eq(apiKeys.state, "active"),
        or(eq(apiKeys.expiresAt, 0), gt(apiKeys.expiresAt, now)),
      ),
    );
  return rows.length > 0;
}
