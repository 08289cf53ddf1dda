import { eq, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { OciError } from "../oci/oci-error.js";
import { registryBlobs, registryQuotas } from "../registry-schema.js";

/** A transaction or the database: quota checks run inside the transaction that adds the bytes. */
type Queryable = Pick<Database, "select">;

/** Bytes an organization stores in the registry: each distinct blob once. */
export async function storedBytes(db: Queryable, orgId: string): Promise<number> {
  const [row] = await db
    .select({ bytes: sql<string>`coalesce(sum(${registryBlobs.size}), 0)` })
    .from(registryBlobs)
    .where(eq(registryBlobs.orgId, orgId));
  return Number(row?.bytes ?? 0);
}

/**
 * Refuses, with DENIED naming the figures, a write that would take the organization's stored bytes
 * past its quota. Call it in the transaction that adds the blob row, so the refused write keeps nothing.
 */
export async function assertQuota(db: Queryable, orgId: string, addedBytes: number): Promise<void> {
  const [quota] = await db
    .select({ limitBytes: registryQuotas.limitBytes })
    .from(registryQuotas)
    .where(eq(registryQuotas.orgId, orgId))
    // Serializes the organization's writes while a quota applies: two pushes cannot both fit the last bytes.
    .for("update");
  if (!quota) return;
  const used = await storedBytes(db, orgId);
  if (used + addedBytes > quota.limitBytes) {
    throw new OciError(
      "DENIED",
      `storage quota exceeded: the organization stores ${used} bytes of its ${quota.limitBytes}, and this write adds ${addedBytes}`,
    );
  }
}
