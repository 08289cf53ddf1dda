import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, desc, eq, gt, inArray, like, lt, ne, or, type SQL } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { issueSecret } from "../../auth/api-key-secret.js";
import { announceCredentialChange, credentialChangeCommitted } from "../../auth/credential-changes.js";
import { roleFamily } from "../../auth/roles.js";
import { sealS3Secret } from "../../auth/s3-secret.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import { apiKeys, organizations, permissions } from "../../auth/auth-schema.js";

export type OrganizationRow = typeof organizations.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type PermissionRow = typeof permissions.$inferSelect;

/** Which keys a listing returns; `expired` and `active` are told apart by `expires_at` against now. */
export type ApiKeyStateFilter = "any" | "active" | "revoked" | "expired";

export interface PermissionFilter {
  readonly principal?: string;
  readonly role?: string;
  readonly resource?: string;
}

/** An issued key: its row and the secret, which exists nowhere else after this answer. */
export interface IssuedKey {
  readonly key: ApiKeyRow;
  readonly secret: string;
}

/** One page of a listing: `pageSize` already clamped by the caller, `pageToken` as received. */
export interface PageRequest {
  readonly pageSize: number;
  readonly pageToken: string;
}

export interface Page<T> {
  readonly items: T[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
}

const notFound = (what: string) => new ConnectError(`${what} not found`, Code.NotFound);

/**
 * The IAM tables. Every query on keys and grants is filtered by org_id; organizations flagged
 * `system` (the platform's own, holding the operator key) are invisible here. Inputs are trusted:
 * the handlers validate names, roles and ids before calling.
 *
 * A change to a key's secret, state or grants is announced in its transaction (every process
 * hears it at commit) and, once committed, applied to this process's credential caches at once,
 * so that the caller's next call already sees it.
 *
 * With `box`, a key's S3 secret access key is sealed into its row when the key is issued or
 * rotated (s3-secret.ts); without it (the operator key written at start-up) it is filled the first
 * time the key authenticates a call.
 */
export function createIamStore(db: Database, options: { readonly box?: SecretBox } = {}) {
  const changed = (keyId: string) => credentialChangeCommitted(db, { keyId });
  const s3Secret = (keyId: string, secret: string) => (options.box ? sealS3Secret(options.box, keyId, secret) : null);

  async function getApiKey(orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
    const [row] = await db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, keyId)));
    return row;
  }

  return {
    getApiKey,

    /** ALREADY_EXISTS when the name is taken. */
    async createOrganization(input: { name: string; displayName: string }): Promise<OrganizationRow> {
      const [row] = await db
        .insert(organizations)
        .values(input)
        .onConflictDoNothing({ target: organizations.name })
        .returning();
      if (!row) throw new ConnectError(`organization name "${input.name}" is taken`, Code.AlreadyExists);
      return row;
    },

    async getOrganization(orgId: string): Promise<OrganizationRow | undefined> {
      const [row] = await db
        .select()
        .from(organizations)
        .where(and(eq(organizations.id, orgId), eq(organizations.system, false)));
      return row;
    },

    /** By name; `onlyOrgId` restricts the listing to the caller's own organization. */
    async listOrganizations(page: PageRequest, onlyOrgId?: string): Promise<Page<OrganizationRow>> {
      const [afterName] = decodeSortKey(page.pageToken, ["string"]) ?? [];
      const rows = await db
        .select()
        .from(organizations)
        .where(
          and(
            eq(organizations.system, false),
            onlyOrgId === undefined ? undefined : eq(organizations.id, onlyOrgId),
            afterName === undefined ? undefined : gt(organizations.name, afterName),
          ),
        )
        .orderBy(asc(organizations.name))
        .limit(page.pageSize + 1);
      return pageOf(rows, page.pageSize, (last) => [last.name]);
    },

    /** Issues a key and grants it `roles` organization-wide, in one transaction. */
    createApiKey(
      orgId: string,
      input: { name: string; roles: readonly string[]; expiresAt: number },
    ): Promise<IssuedKey> {
      return db.transaction(async (tx) => {
        const { secret, hash, prefix } = issueSecret();
        // The id is chosen here because the sealed S3 secret is bound to it.
        const id = randomUUID();
        const [key] = await tx
          .insert(apiKeys)
          .values({
            id,
            orgId,
            name: input.name,
            secretHash: hash,
            secretPrefix: prefix,
            expiresAt: input.expiresAt,
            s3SecretSealed: s3Secret(id, secret),
          })
          .returning();
        const roles = [...new Set(input.roles)];
        if (roles.length > 0)
          await tx.insert(permissions).values(roles.map((role) => ({ orgId, principal: key!.id, role })));
        return { key: key!, secret };
      });
    },

    /** Newest first. */
    async listApiKeys(
      orgId: string,
      state: ApiKeyStateFilter,
      page: PageRequest,
      now = Date.now(),
    ): Promise<Page<ApiKeyRow>> {
      const [afterCreatedAt, afterId] = decodeSortKey(page.pageToken, ["number", "uuid"]) ?? [];
      const rows = await db
        .select()
        .from(apiKeys)
        .where(
          and(
            eq(apiKeys.orgId, orgId),
            stateCondition(state, now),
            afterCreatedAt === undefined
              ? undefined
              : or(
                  lt(apiKeys.createdAt, afterCreatedAt),
                  and(eq(apiKeys.createdAt, afterCreatedAt), lt(apiKeys.id, afterId!)),
                ),
          ),
        )
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
        .limit(page.pageSize + 1);
      return pageOf(rows, page.pageSize, (last) => [last.createdAt, last.id]);
    },

    /**
     * A new secret for an active key. The old hash is overwritten in the same statement, so the
     * old secret fails from the next lookup on. NOT_FOUND, or FAILED_PRECONDITION for a revoked
     * or expired key.
     */
    async rotateApiKey(orgId: string, keyId: string, now = Date.now()): Promise<IssuedKey> {
      const { secret, hash, prefix } = issueSecret();
      const key = await db.transaction(async (tx) => {
        const [rotated] = await tx
          .update(apiKeys)
          .set({ secretHash: hash, secretPrefix: prefix, rotatedAt: now, s3SecretSealed: s3Secret(keyId, secret) })
          .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, keyId), stateCondition("active", now)))
          .returning();
        if (rotated) await announceCredentialChange(tx, { keyId });
        return rotated;
      });
      if (key) {
        changed(keyId);
        return { key, secret };
      }
      const existing = await getApiKey(orgId, keyId);
      if (!existing) throw notFound(`API key "${keyId}"`);
      const why = existing.state === "revoked" ? "revoked" : "expired";
      throw new ConnectError(`API key "${keyId}" is ${why}; issue a new key instead`, Code.FailedPrecondition);
    },

    /** Revokes a key and deletes its grants, in one transaction; a revoked key is returned as is. */
    async revokeApiKey(orgId: string, keyId: string, now = Date.now()): Promise<ApiKeyRow> {
      const revoked = await db.transaction(async (tx) => {
        const [key] = await tx
          .select()
          .from(apiKeys)
          .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, keyId)))
          .for("update");
        if (!key) throw notFound(`API key "${keyId}"`);
        if (key.state === "revoked") return key;
        const [revoked] = await tx
          .update(apiKeys)
          .set({ state: "revoked", revokedAt: now })
          .where(eq(apiKeys.id, keyId))
          .returning();
        await tx.delete(permissions).where(and(eq(permissions.orgId, orgId), eq(permissions.principal, keyId)));
        await announceCredentialChange(tx, { keyId });
        return revoked!;
      });
      changed(keyId);
      return revoked;
    },

    /**
     * Grants each role to an active key of the organization on `resource` ("" = organization-wide),
     * replacing another tier of the same family there, in one transaction. Returns one grant per
     * role, new or existing, in the order asked. NOT_FOUND for an unknown or revoked key,
     * FAILED_PRECONDITION for an expired one.
     */
    async grantPermissions(
      orgId: string,
      principal: string,
      roles: readonly string[],
      resource: string,
      now = Date.now(),
    ): Promise<PermissionRow[]> {
      const grants = await db.transaction(async (tx) => {
        const [key] = await tx
          .select()
          .from(apiKeys)
          .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, principal)))
          .for("update");
        if (!key || key.state === "revoked")
          throw notFound(`principal "${principal}" (an active API key of this organization)`);
        if (key.expiresAt !== 0 && key.expiresAt <= now)
          throw new ConnectError(`principal "${principal}" is an expired API key`, Code.FailedPrecondition);
        const grantsOf = and(
          eq(permissions.orgId, orgId),
          eq(permissions.principal, principal),
          eq(permissions.resource, resource),
        );
        for (const role of roles) {
          const family = roleFamily(role);
          if (family !== role)
            await tx
              .delete(permissions)
              .where(and(grantsOf, like(permissions.role, `${family}.%`), ne(permissions.role, role)));
        }
        await tx
          .insert(permissions)
          .values(roles.map((role) => ({ orgId, principal, role, resource })))
          .onConflictDoNothing();
        const rows = await tx
          .select()
          .from(permissions)
          .where(and(grantsOf, inArray(permissions.role, [...roles])));
        await announceCredentialChange(tx, { keyId: principal });
        return roles.map((role) => rows.find((row) => row.role === role)!);
      });
      changed(principal);
      return grants;
    },

    /** Oldest first. */
    async listPermissions(orgId: string, filter: PermissionFilter, page: PageRequest): Promise<Page<PermissionRow>> {
      const [afterCreatedAt, afterId] = decodeSortKey(page.pageToken, ["number", "uuid"]) ?? [];
      const rows = await db
        .select()
        .from(permissions)
        .where(
          and(
            eq(permissions.orgId, orgId),
            filter.principal ? eq(permissions.principal, filter.principal) : undefined,
            filter.role ? eq(permissions.role, filter.role) : undefined,
            filter.resource ? eq(permissions.resource, filter.resource) : undefined,
            afterCreatedAt === undefined
              ? undefined
              : or(
                  gt(permissions.createdAt, afterCreatedAt),
                  and(eq(permissions.createdAt, afterCreatedAt), gt(permissions.id, afterId!)),
                ),
          ),
        )
        .orderBy(asc(permissions.createdAt), asc(permissions.id))
        .limit(page.pageSize + 1);
      return pageOf(rows, page.pageSize, (last) => [last.createdAt, last.id]);
    },

    /** NOT_FOUND unless the grant exists in this organization. */
    async revokePermission(orgId: string, permissionId: string): Promise<void> {
      const principal = await db.transaction(async (tx) => {
        const [deleted] = await tx
          .delete(permissions)
          .where(and(eq(permissions.orgId, orgId), eq(permissions.id, permissionId)))
          .returning({ principal: permissions.principal });
        if (deleted) await announceCredentialChange(tx, { keyId: deleted.principal });
        return deleted?.principal;
      });
      if (principal === undefined) throw notFound(`permission "${permissionId}"`);
      changed(principal);
    },
  };
}

export type IamStore = ReturnType<typeof createIamStore>;

/** Keys in a lifecycle state at `now`; expiry is a time, not a stored state. */
function stateCondition(state: ApiKeyStateFilter, now: number): SQL | undefined {
  const unexpired = or(eq(apiKeys.expiresAt, 0), gt(apiKeys.expiresAt, now));
  switch (state) {
    case "any":
      return undefined;
    case "active":
      return and(eq(apiKeys.state, "active"), unexpired);
    case "revoked":
      return eq(apiKeys.state, "revoked");
    case "expired":
      return and(eq(apiKeys.state, "active"), ne(apiKeys.expiresAt, 0), lt(apiKeys.expiresAt, now + 1));
  }
}

/** Rows were fetched with one extra to know whether another page follows. */
function pageOf<T>(rows: T[], pageSize: number, sortKey: (last: T) => (string | number)[]): Page<T> {
  if (rows.length <= pageSize) return { items: rows, nextPageToken: "" };
  const items = rows.slice(0, pageSize);
  return { items, nextPageToken: Buffer.from(JSON.stringify(sortKey(items[items.length - 1]!))).toString("base64url") };
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The sort key of the last row of the previous page, from an opaque token (base64url of its JSON
 * array). A token this store did not write is INVALID_ARGUMENT, never a database error.
 */
function decodeSortKey<const Shape extends readonly ("string" | "number" | "uuid")[]>(
  token: string,
  shape: Shape,
): { [I in keyof Shape]: Shape[I] extends "number" ? number : string } | undefined {
  if (token === "") return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  const fits = (value: unknown, kind: "string" | "number" | "uuid") =>
    kind === "number"
      ? Number.isSafeInteger(value)
      : typeof value === "string" && (kind === "string" || uuidPattern.test(value));
  if (!Array.isArray(key) || key.length !== shape.length || !key.every((value, i) => fits(value, shape[i]!))) {
    throw new ConnectError("page_token is not a token this list returned", Code.InvalidArgument);
  }
  return key as { [I in keyof Shape]: Shape[I] extends "number" ? number : string };
}
