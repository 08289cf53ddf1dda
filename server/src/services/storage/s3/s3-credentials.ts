import { createHash } from "node:crypto";
import { and, eq, lte, sql } from "drizzle-orm";
import { apiKeys, organizations, permissions } from "../../../auth/auth-schema.js";
import { lastUsedResolutionMs } from "../../../auth/auth-interceptor.js";
import type { CredentialCache, VerifiedCredential } from "../../../auth/credential-cache.js";
import type { Principal } from "../../../auth/principal.js";
import { openS3Secret } from "../../../auth/s3-secret.js";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { Database } from "../../../db/database.js";
import { perDatabase } from "../../../db/prepared-statements.js";
import { S3Error } from "./s3-error.js";

/** A verified access key id: who calls, and the secret their signature must match. */
export interface S3Caller {
  readonly principal: Principal;
  readonly secretAccessKey: string;
  /** Moves the key's `last_used_at` (at most once a minute): called once the signature checked out. */
  markUsed(): Promise<void>;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key by id with its organization and organization-wide roles, as a prepared statement (every S3 request that misses the cache). */
const keyById = perDatabase((db) =>
  db
    .select({
      keyId: apiKeys.id,
      orgId: apiKeys.orgId,
      state: apiKeys.state,
      secretPrefix: apiKeys.secretPrefix,
      expiresAt: apiKeys.expiresAt,
      lastUsedAt: apiKeys.lastUsedAt,
      s3SecretSealed: apiKeys.s3SecretSealed,
      orgName: organizations.name,
      roles: sql<string[]>`coalesce((select array_agg(${permissions.role}) from ${permissions}
        where ${permissions.orgId} = ${apiKeys.orgId} and ${permissions.principal} = ${apiKeys.id}::text
        and ${permissions.resource} = ''), '{}')`,
    })
    .from(apiKeys)
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(eq(apiKeys.id, sql.placeholder("keyId")))
    .prepare("s3_credential_by_key_id"),
);

/**
 * Resolves S3 access key ids (API key ids) to their caller and secret access key. Accepted keys
 * are remembered in a credential cache that follows the same change notices as the bearer path
 * (credential-changes.ts), so a revoked or rotated key, or one whose roles changed, stops working
 * here as soon as it does on the RPC planes. The cache is indexed by a hash of the key id and
 * holds each key's opened secret with it.
 */
/** A key accepted for S3, with its opened secret access key. */
export interface S3Credential extends VerifiedCredential {
  readonly secretAccessKey: string;
}

export function createS3Credentials(options: {
  readonly db: Database;
  readonly box: SecretBox;
  readonly cache?: CredentialCache<S3Credential>;
  readonly now?: () => number;
}) {
  const { db, box, cache } = options;
  const now = options.now ?? Date.now;
  const cacheKey = (keyId: string) => createHash("sha256").update(`s3:${keyId}`).digest();
  /** `last_used_at` moves as on the bearer path: at most once a minute per key. */
  async function touch(credential: Pick<VerifiedCredential, "principal" | "lastUsedAt">): Promise<void> {
    const at = now();
    if (at - credential.lastUsedAt < lastUsedResolutionMs) return;
    credential.lastUsedAt = at;
    await db
      .update(apiKeys)
      .set({ lastUsedAt: at })
      .where(and(eq(apiKeys.id, credential.principal.keyId), lte(apiKeys.lastUsedAt, at - lastUsedResolutionMs)));
  }
  const unknown = () =>
    new S3Error("InvalidAccessKeyId", "the AWS access key id you provided does not exist in our records");

  return {
    async resolve(accessKeyId: string): Promise<S3Caller> {
      if (!uuidPattern.test(accessKeyId)) throw unknown();
      const keyId = accessKeyId.toLowerCase();
      const hashed = cacheKey(keyId);
      const cached = cache?.get(hashed);
      if (cached) {
        if (cached.expiresAt !== 0 && cached.expiresAt <= now()) throw unknown();
        return { principal: cached.principal, secretAccessKey: cached.secretAccessKey, markUsed: () => touch(cached) };
      }
      const ticket = cache?.ticket() ?? 0;
      const [row] = await keyById(db).execute({ keyId });
      // Revoked and expired keys are refused like unknown ones: S3 answers InvalidAccessKeyId.
      if (!row || row.state === "revoked" || (row.expiresAt !== 0 && row.expiresAt <= now())) throw unknown();
      if (!row.s3SecretSealed) {
        throw new S3Error(
          "InvalidAccessKeyId",
          "this API key has no S3 secret yet: use it once as a bearer token, or rotate it, to enable S3 access",
        );
      }
      const secretAccessKey = openS3Secret(box, row.keyId, row.s3SecretSealed);
      const principal: Principal = {
        orgId: row.orgId,
        orgName: row.orgName,
        keyId: row.keyId,
        roles: new Set(row.roles),
      };
      // The secret is cached with the key it belongs to: a lookup that raced a rotation is
      // dropped by the cache's ticket, secret and all.
      const credential: S3Credential = {
        principal,
        secretPrefix: row.secretPrefix,
        expiresAt: row.expiresAt,
        lastUsedAt: row.lastUsedAt,
        secretAccessKey,
      };
      cache?.put(hashed, credential, ticket);
      return { principal, secretAccessKey, markUsed: () => touch(credential) };
    },
  };
}

export type S3Credentials = ReturnType<typeof createS3Credentials>;
