import { and, asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { sourceCredentials, type CredentialTypeName, type ProviderName } from "./source-schema.js";

/** What may be shown about a credential to anyone in its organization: never the secret. */
export type CredentialMetadataRow = Omit<typeof sourceCredentials.$inferSelect, "sealedSecret" | "orgId">;

export interface SealedCredentialRow extends CredentialMetadataRow {
  readonly sealedSecret: Uint8Array;
}

export interface CredentialInsert {
  /** Chosen by the caller: the sealed secret is bound to it before the row exists. */
  readonly id: string;
  readonly name: string;
  readonly provider: ProviderName;
  readonly type: CredentialTypeName;
  readonly sourceId: string | null;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
  readonly sealedSecret: Uint8Array;
}

export interface CredentialRotation {
  readonly sealedSecret: Uint8Array;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
}

export interface CredentialStore {
  insert(orgId: string, credential: CredentialInsert): Promise<CredentialMetadataRow>;
  get(orgId: string, id: string): Promise<SealedCredentialRow | undefined>;
  list(orgId: string, filter: { sourceId?: string; provider?: ProviderName }): Promise<CredentialMetadataRow[]>;
  /**
   * Replaces the secret only when the row is still at `expectedUpdatedAt` (compare and set):
   * undefined when another write came first, or the row is gone.
   */
  rotate(
    orgId: string,
    id: string,
    expectedUpdatedAt: number,
    rotation: CredentialRotation,
  ): Promise<CredentialMetadataRow | undefined>;
  delete(orgId: string, id: string): Promise<boolean>;
}

const metadataColumns = {
  id: sourceCredentials.id,
  name: sourceCredentials.name,
  provider: sourceCredentials.provider,
  type: sourceCredentials.type,
  sourceId: sourceCredentials.sourceId,
  scopes: sourceCredentials.scopes,
  expiresAt: sourceCredentials.expiresAt,
  createdAt: sourceCredentials.createdAt,
  updatedAt: sourceCredentials.updatedAt,
};

/** Queries on `source_credentials`, each scoped to an organization. */
export function createCredentialStore(db: Database): CredentialStore {
  const row = (orgId: string, id: string) => and(eq(sourceCredentials.orgId, orgId), eq(sourceCredentials.id, id));

  return {
    async insert(orgId, credential) {
      const [created] = await db
        .insert(sourceCredentials)
        .values({ orgId, ...credential, scopes: [...credential.scopes] })
        .returning(metadataColumns);
      return created!;
    },

    async get(orgId, id) {
      const [found] = await db
        .select({ ...metadataColumns, sealedSecret: sourceCredentials.sealedSecret })
        .from(sourceCredentials)
        .where(row(orgId, id));
      return found;
    },

    async list(orgId, { sourceId, provider }) {
      return db
        .select(metadataColumns)
        .from(sourceCredentials)
        .where(
          and(
            eq(sourceCredentials.orgId, orgId),
            sourceId === undefined ? undefined : eq(sourceCredentials.sourceId, sourceId),
            provider === undefined ? undefined : eq(sourceCredentials.provider, provider),
          ),
        )
        .orderBy(asc(sourceCredentials.createdAt), asc(sourceCredentials.id));
    },

    async rotate(orgId, id, expectedUpdatedAt, rotation) {
      const [updated] = await db
        .update(sourceCredentials)
        .set({
          sealedSecret: rotation.sealedSecret,
          scopes: [...rotation.scopes],
          expiresAt: rotation.expiresAt,
          // One past the previous write when two fall in the same millisecond: the compare and set
          // of a later rotation must see every earlier one.
          updatedAt: sql`greatest((extract(epoch from statement_timestamp()) * 1000)::bigint, ${sourceCredentials.updatedAt} + 1)`,
        })
        .where(and(row(orgId, id), eq(sourceCredentials.updatedAt, expectedUpdatedAt)))
        .returning(metadataColumns);
      return updated;
    },

    async delete(orgId, id) {
      const removed = await db.delete(sourceCredentials).where(row(orgId, id)).returning({ id: sourceCredentials.id });
      return removed.length > 0;
    },
  };
}
