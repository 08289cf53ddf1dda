import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { secrets } from "./secrets-schema.js";

export type SecretType = (typeof secrets.$inferSelect)["type"];

/** What may be shown about a slot to anyone in its organization: never the value. */
export interface SecretMetadataRow {
  readonly name: string;
  readonly type: SecretType;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface SealedSecretRow extends SecretMetadataRow {
  /** The SecretValue sealed by the secret box; the store never sees cleartext. */
  readonly sealedValue: Uint8Array;
}

export interface SecretWrite {
  readonly name: string;
  readonly type: SecretType;
  readonly sealedValue: Uint8Array;
}

export interface SecretStore {
  /** Creates the slot or replaces its value and type, keeping `createdAt`. */
  upsert(orgId: string, write: SecretWrite): Promise<SecretMetadataRow>;
  get(orgId: string, name: string): Promise<SealedSecretRow | undefined>;
  /** Like get, and locks the row until the surrounding transaction ends. */
  getForUpdate(orgId: string, name: string): Promise<SealedSecretRow | undefined>;
  /** Every slot of the organization, by name in byte order. */
  list(orgId: string): Promise<SecretMetadataRow[]>;
  /** Answers whether a slot existed. */
  delete(orgId: string, name: string): Promise<boolean>;
}

const metadataColumns = {
  name: secrets.name,
  type: secrets.type,
  createdAt: secrets.createdAt,
  updatedAt: secrets.updatedAt,
};

const sealedColumns = { ...metadataColumns, sealedValue: secrets.sealedValue };

/** Queries on `secrets`, each one scoped to an organization. Pass a transaction to join one. */
export function createSecretStore(db: Database): SecretStore {
  const slot = (orgId: string, name: string) => and(eq(secrets.orgId, orgId), eq(secrets.name, name));

  return {
    async upsert(orgId, write) {
      const [row] = await db
        .insert(secrets)
        .values({ orgId, name: write.name, type: write.type, sealedValue: write.sealedValue })
        .onConflictDoUpdate({
          target: [secrets.orgId, secrets.name],
          set: {
            type: sql`excluded.type`,
            sealedValue: sql`excluded.sealed_value`,
            // The database clock, shared by every replica; one past the previous write when two
            // writes fall in the same millisecond, so every rotation is visible as a newer time.
            updatedAt: sql`greatest(excluded.updated_at, ${secrets.updatedAt} + 1)`,
          },
        })
        .returning(metadataColumns);
      return row!;
    },

    async get(orgId, name) {
      const [row] = await db.select(sealedColumns).from(secrets).where(slot(orgId, name));
      return row;
    },

    async getForUpdate(orgId, name) {
      const [row] = await db.select(sealedColumns).from(secrets).where(slot(orgId, name)).for("update");
      return row;
    },

    async list(orgId) {
      // Byte order: the same listing on the embedded engine and on a server with any locale.
      return db
        .select(metadataColumns)
        .from(secrets)
        .where(eq(secrets.orgId, orgId))
        .orderBy(sql`${secrets.name} collate "C"`);
    },

    async delete(orgId, name) {
      const removed = await db.delete(secrets).where(slot(orgId, name)).returning({ name: secrets.name });
      return removed.length > 0;
    },
  };
}
