import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { SecretBox } from "../../../../crypto/secret-box.js";
import type { Database } from "../../../../db/database.js";
import {
  ciSecretAssociatedData,
  scopeKey,
  validCiSecretName,
  validCiSecretValue,
  type CiSecretScope,
} from "./ci-secret-scope.js";
import { gitCiSecrets } from "./git-ci-secrets-schema.js";

/** All that is ever shown of a CI secret: its name and times, never its value. */
export interface CiSecretMetadata {
  readonly name: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface CiSecretStore {
  /** Creates the secret or replaces its value, keeping `createdAt`; validates name and value. */
  put(orgId: string, scope: CiSecretScope, name: string, value: unknown): Promise<CiSecretMetadata>;
  /** The scope's secrets by name in byte order. */
  list(orgId: string, scope: CiSecretScope): Promise<CiSecretMetadata[]>;
  /** Answers whether the secret existed. */
  delete(orgId: string, scope: CiSecretScope, name: string): Promise<boolean>;
  /**
   * The values a job of the repository (in an environment, if given) receives: organization,
   * then repository, then environment secrets, the narrower one winning on a name clash.
   */
  resolveForJob(orgId: string, repoId: string, environment?: string): Promise<Map<string, string>>;
  /** Removes every secret of a repository and its environments. */
  deleteRepository(orgId: string, repoId: string): Promise<void>;
}

const metadataColumns = {
  name: gitCiSecrets.name,
  createdAt: gitCiSecrets.createdAt,
  updatedAt: gitCiSecrets.updatedAt,
};

/** CI secrets sealed with the platform's secret box; the database only ever holds sealed bytes. */
export function createCiSecretStore(db: Database, box: SecretBox): CiSecretStore {
  const inScope = (orgId: string, scope: CiSecretScope) =>
    and(eq(gitCiSecrets.orgId, orgId), eq(gitCiSecrets.scope, scopeKey(scope)));

  return {
    async put(orgId, scope, name, value) {
      const validName = validCiSecretName(name);
      const plaintext = new TextEncoder().encode(validCiSecretValue(value));
      const sealedValue = box.seal(plaintext, ciSecretAssociatedData(orgId, scope, validName));
      const [row] = await db
        .insert(gitCiSecrets)
        .values({
          orgId,
          scope: scopeKey(scope),
          repoId: scope.kind === "organization" ? null : scope.repoId,
          environment: scope.kind === "environment" ? scope.environment : null,
          name: validName,
          sealedValue,
        })
        .onConflictDoUpdate({
          target: [gitCiSecrets.orgId, gitCiSecrets.scope, gitCiSecrets.name],
          set: {
            sealedValue: sql`excluded.sealed_value`,
            // One past the previous write within the same millisecond: every update shows as newer.
            updatedAt: sql`greatest(excluded.updated_at, ${gitCiSecrets.updatedAt} + 1)`,
          },
        })
        .returning(metadataColumns);
      return row!;
    },

    async list(orgId, scope) {
      return db
        .select(metadataColumns)
        .from(gitCiSecrets)
        .where(inScope(orgId, scope))
        .orderBy(asc(sql`${gitCiSecrets.name} collate "C"`));
    },

    async delete(orgId, scope, name) {
      const deleted = await db
        .delete(gitCiSecrets)
        .where(and(inScope(orgId, scope), eq(gitCiSecrets.name, name)))
        .returning({ name: gitCiSecrets.name });
      return deleted.length > 0;
    },

    async resolveForJob(orgId, repoId, environment) {
      const scopes: CiSecretScope[] = [{ kind: "organization" }, { kind: "repository", repoId }];
      if (environment !== undefined) scopes.push({ kind: "environment", repoId, environment });
      const keys = scopes.map(scopeKey);
      const rows = await db
        .select({ scope: gitCiSecrets.scope, name: gitCiSecrets.name, sealedValue: gitCiSecrets.sealedValue })
        .from(gitCiSecrets)
        .where(and(eq(gitCiSecrets.orgId, orgId), inArray(gitCiSecrets.scope, keys)));
      const values = new Map<string, string>();
      // Broadest first, so a narrower scope overwrites the same name.
      for (const [index, scope] of scopes.entries()) {
        for (const row of rows.filter((candidate) => candidate.scope === keys[index])) {
          const plaintext = box.open(row.sealedValue, ciSecretAssociatedData(orgId, scope, row.name));
          values.set(row.name, new TextDecoder().decode(plaintext));
        }
      }
      return values;
    },

    async deleteRepository(orgId, repoId) {
      await db.delete(gitCiSecrets).where(and(eq(gitCiSecrets.orgId, orgId), eq(gitCiSecrets.repoId, repoId)));
    },
  };
}
