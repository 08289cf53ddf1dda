import { and, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { registryBlobs, registryManifests, registryRepositories, registryScans } from "../registry-schema.js";
import type { VulnerabilityReport } from "./vulnerability-report.js";

/** Manifest media types of single images; indexes (multi-arch) are not scanned themselves. */
export const IMAGE_MANIFEST_TYPES = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];

/** Results that depend on the feed, redone when the feed changes; Unsupported does not depend on it. */
const FEED_DEPENDENT = ["Success", "Error", "NoFeed"];

/** An image manifest of an organization waiting for a scan, with its scan row as it was seen. */
export interface ScanCandidate {
  readonly orgId: string;
  readonly digest: string;
  /** The scan row's status and time, or null when it has none: what a claim compares against. */
  readonly status: string | null;
  readonly updatedAt: number | null;
}

export type ScanResult =
  | { readonly status: "Success"; readonly report: VulnerabilityReport; readonly feedVersion: string }
  | {
      readonly status: "Error" | "Unsupported" | "NoFeed";
      readonly message: string;
      readonly feedVersion: string | null;
    };

/**
 * The scan worker's queries. A claim is a compare-and-set on the scan row (an insert that does
 * nothing on conflict, or an update conditional on the status and time that were read), so any
 * number of processes sharing the database scan each (organization, digest) once.
 */
export function createScanStore(db: Database) {
  return {
    /**
     * Image manifests with no scan, with a feed-dependent result from another feed version, or
     * with a Running scan not touched since `staleBefore` (its process died).
     */
    async candidates(feedVersion: string | null, staleBefore: number, limit: number): Promise<ScanCandidate[]> {
      // Oldest push first, so that one organization's burst of pushes waits behind earlier images.
      return db
        .select({
          orgId: registryRepositories.orgId,
          digest: registryManifests.digest,
          status: registryScans.status,
          updatedAt: registryScans.updatedAt,
        })
        .from(registryManifests)
        .innerJoin(registryRepositories, eq(registryRepositories.id, registryManifests.repositoryId))
        .leftJoin(
          registryScans,
          and(
            eq(registryScans.orgId, registryRepositories.orgId),
            eq(registryScans.manifestDigest, registryManifests.digest),
          ),
        )
        .where(
          and(
            inArray(registryManifests.mediaType, IMAGE_MANIFEST_TYPES),
            or(
              isNull(registryScans.orgId),
              and(
                inArray(registryScans.status, FEED_DEPENDENT),
                sql`${registryScans.feedVersion} is distinct from ${feedVersion}::text`,
              ),
              and(eq(registryScans.status, "Running"), lt(registryScans.updatedAt, staleBefore)),
            ),
          ),
        )
        .groupBy(registryRepositories.orgId, registryManifests.digest, registryScans.status, registryScans.updatedAt)
        .orderBy(sql`min(${registryManifests.pushedAt})`, registryRepositories.orgId, registryManifests.digest)
        .limit(limit);
    },

    /** Marks the candidate Running at `now` unless another process got there first; answers whether this one did. */
    async claim(candidate: ScanCandidate, now: number): Promise<boolean> {
      const { orgId, digest } = candidate;
      if (candidate.status === null) {
        const inserted = await db
          .insert(registryScans)
          .values({ orgId, manifestDigest: digest, status: "Running", updatedAt: now })
          .onConflictDoNothing()
          .returning({ orgId: registryScans.orgId });
        return inserted.length === 1;
      }
      const updated = await db
        .update(registryScans)
        .set({ status: "Running", updatedAt: now })
        .where(
          and(
            eq(registryScans.orgId, orgId),
            eq(registryScans.manifestDigest, digest),
            eq(registryScans.status, candidate.status),
            eq(registryScans.updatedAt, candidate.updatedAt ?? -1),
          ),
        )
        .returning({ orgId: registryScans.orgId });
      return updated.length === 1;
    },

    /** The manifest's bytes in any repository of the organization (the same digest, the same bytes). */
    async manifestContent(orgId: string, digest: string): Promise<Uint8Array | undefined> {
      const [row] = await db
        .select({ content: registryManifests.content })
        .from(registryManifests)
        .innerJoin(registryRepositories, eq(registryRepositories.id, registryManifests.repositoryId))
        .where(and(eq(registryRepositories.orgId, orgId), eq(registryManifests.digest, digest)))
        .limit(1);
      return row?.content;
    },

    async blobStorageKey(orgId: string, digest: string): Promise<string | undefined> {
      const [row] = await db
        .select({ key: registryBlobs.storageKey })
        .from(registryBlobs)
        .where(and(eq(registryBlobs.orgId, orgId), eq(registryBlobs.digest, digest)));
      return row?.key;
    },

    /** Writes the result of the claim made at `claimedAt`; a claim taken over meanwhile is left alone. */
    async finish(orgId: string, digest: string, claimedAt: number, result: ScanResult, now: number): Promise<void> {
      const success = result.status === "Success";
      await db
        .update(registryScans)
        .set({
          status: result.status,
          severity: success ? result.report.severity : null,
          total: success ? result.report.total : null,
          fixable: success ? result.report.fixable : null,
          report: success ? result.report.vulnerabilities : null,
          feedVersion: result.feedVersion,
          errorMessage: success ? null : result.message,
          updatedAt: now,
        })
        .where(
          and(
            eq(registryScans.orgId, orgId),
            eq(registryScans.manifestDigest, digest),
            eq(registryScans.status, "Running"),
            eq(registryScans.updatedAt, claimedAt),
          ),
        );
    },

    /** Moves a claim made (or last renewed) at `claimedAt` to `now`; answers whether it is still this process's. */
    async renew(orgId: string, digest: string, claimedAt: number, now: number): Promise<boolean> {
      const renewed = await db
        .update(registryScans)
        .set({ updatedAt: now })
        .where(
          and(
            eq(registryScans.orgId, orgId),
            eq(registryScans.manifestDigest, digest),
            eq(registryScans.status, "Running"),
            eq(registryScans.updatedAt, claimedAt),
          ),
        )
        .returning({ orgId: registryScans.orgId });
      return renewed.length === 1;
    },

    /** Drops a claim whose manifest was deleted meanwhile. */
    async release(orgId: string, digest: string, claimedAt: number): Promise<void> {
      await db
        .delete(registryScans)
        .where(
          and(
            eq(registryScans.orgId, orgId),
            eq(registryScans.manifestDigest, digest),
            eq(registryScans.updatedAt, claimedAt),
          ),
        );
    },
  };
}

export type ScanStore = ReturnType<typeof createScanStore>;
