import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { RegistryImplementation } from "../../../../../gen/openapi/registry/handler.js";
import type { Artifact, Tag, Vulnerability } from "../../../../../gen/openapi/registry/types.js";
import type { Database } from "../../../db/database.js";
import { looksLikeDigest } from "../content/digest.js";
import { storedBytes } from "../content/quota.js";
import { setRepositoryVisibility } from "../content/repositories.js";
import { immutableTagPattern } from "../content/tag-immutability.js";
import {
  registryManifestReferences,
  registryManifests,
  registryQuotas,
  registryRepositories,
  registryScans,
  registryTags,
} from "../registry-schema.js";
import { controlCaller } from "./control-auth.js";

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrEmpty = (ms: number | null) => (ms === null ? "" : iso(ms));
const page = (query: { page: number; page_size: number }) => ({
  limit: query.page_size,
  offset: (query.page - 1) * query.page_size,
});

/** The control plane's operations over the registry's tables. */
export function createRegistryControlHandlers(db: Database): RegistryImplementation {
  /** The repository `{repo}` of the caller's organization, or not found. */
  async function repository(orgId: string, name: string) {
    const [row] = await db
      .select()
      .from(registryRepositories)
      .where(and(eq(registryRepositories.orgId, orgId), eq(registryRepositories.name, name)));
    if (!row) throw new ConnectError(`repository ${name.slice(0, 255)} not found`, Code.NotFound);
    return row;
  }

  /** The manifest digest a tag or digest names in the repository, or not found. */
  async function artifactDigest(repositoryId: string, reference: string): Promise<string> {
    const [row] = looksLikeDigest(reference)
      ? await db
          .select({ digest: registryManifests.digest })
          .from(registryManifests)
          .where(and(eq(registryManifests.repositoryId, repositoryId), eq(registryManifests.digest, reference)))
      : await db
          .select({ digest: registryTags.manifestDigest })
          .from(registryTags)
          .where(and(eq(registryTags.repositoryId, repositoryId), eq(registryTags.name, reference)));
    if (!row) throw new ConnectError(`artifact ${reference.slice(0, 200)} not found`, Code.NotFound);
    return row.digest;
  }

  return {
    async checkRegistryHealth() {
      return { status: 200, body: { status: "ok", service: "registry" } };
    },

    async listRepositories({ query }, context) {
      const { orgId, orgName } = controlCaller(context);
      const where = eq(registryRepositories.orgId, orgId);
      const [total] = await db.select({ n: count() }).from(registryRepositories).where(where);
      const rows = await db
        .select({
          name: registryRepositories.name,
          public: registryRepositories.public,
          pullCount: registryRepositories.pullCount,
          createdAt: registryRepositories.createdAt,
          updatedAt: registryRepositories.updatedAt,
          artifacts: sql<number>`(select count(*)::int from ${registryManifests} where ${registryManifests.repositoryId} = ${registryRepositories.id})`,
        })
        .from(registryRepositories)
        .where(where)
        .orderBy(asc(registryRepositories.name))
        .limit(page(query).limit)
        .offset(page(query).offset);
      const items = rows.map((r) => ({
        name: `${orgName}/${r.name}`,
        project_name: orgName,
        artifact_count: Number(r.artifacts),
        pull_count: r.pullCount,
        creation_time: iso(r.createdAt),
        update_time: iso(r.updatedAt),
        public: r.public,
      }));
      return { status: 200, body: { items, total_count: total?.n ?? 0 } };
    },

    async listArtifacts({ path, query }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      const where = eq(registryManifests.repositoryId, repo.id);
      const [total] = await db.select({ n: count() }).from(registryManifests).where(where);
      const rows = await db
        .select({
          digest: registryManifests.digest,
          mediaType: registryManifests.mediaType,
          size: registryManifests.totalSize,
          pushedAt: registryManifests.pushedAt,
          pulledAt: registryManifests.pulledAt,
          tags: sql<
            string[]
          >`coalesce((select array_agg(${registryTags.name} order by ${registryTags.name}) from ${registryTags}
            where ${registryTags.repositoryId} = ${registryManifests.repositoryId} and ${registryTags.manifestDigest} = ${registryManifests.digest}), '{}')`,
          scanStatus: registryScans.status,
          severity: registryScans.severity,
          total: registryScans.total,
          fixable: registryScans.fixable,
        })
        .from(registryManifests)
        .leftJoin(
          registryScans,
          and(eq(registryScans.orgId, orgId), eq(registryScans.manifestDigest, registryManifests.digest)),
        )
        .where(where)
        .orderBy(desc(registryManifests.pushedAt), asc(registryManifests.digest))
        .limit(page(query).limit)
        .offset(page(query).offset);
      const items: Artifact[] = rows.map((r) => ({
        digest: r.digest,
        tags: r.tags,
        size: r.size,
        media_type: r.mediaType,
        push_time: iso(r.pushedAt),
        pull_time: isoOrEmpty(r.pulledAt),
        // Absent until the scan has a result.
        ...(r.scanStatus === "Success" && {
          scan_overview: {
            scan_status: r.scanStatus,
            severity: r.severity ?? "None",
            total: r.total ?? 0,
            fixable: r.fixable ?? 0,
          },
        }),
      }));
      return { status: 200, body: { items, total_count: total?.n ?? 0 } };
    },

    async deleteArtifact({ path }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      const digest = await artifactDigest(repo.id, path.reference);
      await db.transaction(async (tx) => {
        const tags = await tx
          .select({ name: registryTags.name })
          .from(registryTags)
          .where(and(eq(registryTags.repositoryId, repo.id), eq(registryTags.manifestDigest, digest)));
        const protectedTag = tags.find((t) => immutableTagPattern(repo.immutableTagPatterns, t.name) !== undefined);
        if (protectedTag) {
          throw new ConnectError(`conflict: tag ${protectedTag.name} of this artifact is immutable`, Code.Aborted);
        }
        await tx
          .delete(registryTags)
          .where(and(eq(registryTags.repositoryId, repo.id), eq(registryTags.manifestDigest, digest)));
        await tx
          .delete(registryManifestReferences)
          .where(
            and(
              eq(registryManifestReferences.repositoryId, repo.id),
              eq(registryManifestReferences.manifestDigest, digest),
            ),
          );
        await tx
          .delete(registryManifests)
          .where(and(eq(registryManifests.repositoryId, repo.id), eq(registryManifests.digest, digest)));
        await tx
          .update(registryRepositories)
          .set({ updatedAt: Date.now() })
          .where(eq(registryRepositories.id, repo.id));
      });
      return { status: 200 };
    },

    async listArtifactTags({ path, query }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      const digest = await artifactDigest(repo.id, path.reference);
      const where = and(eq(registryTags.repositoryId, repo.id), eq(registryTags.manifestDigest, digest));
      const [total] = await db.select({ n: count() }).from(registryTags).where(where);
      const rows = await db
        .select()
        .from(registryTags)
        .where(where)
        .orderBy(asc(registryTags.name))
        .limit(page(query).limit)
        .offset(page(query).offset);
      const items: Tag[] = rows.map((t) => ({
        name: t.name,
        push_time: iso(t.pushedAt),
        pull_time: isoOrEmpty(t.pulledAt),
        immutable: immutableTagPattern(repo.immutableTagPatterns, t.name) !== undefined,
      }));
      return { status: 200, body: { items, total_count: total?.n ?? 0 } };
    },

    async getVulnerabilities({ path }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      const digest = await artifactDigest(repo.id, path.reference);
      const [scan] = await db
        .select()
        .from(registryScans)
        .where(and(eq(registryScans.orgId, orgId), eq(registryScans.manifestDigest, digest)));
      const status = (scan?.status ?? "Pending") as
        "Pending" | "Running" | "Success" | "Error" | "Unsupported" | "NoFeed";
      const vulnerabilities = (status === "Success" ? (scan?.report as Vulnerability[] | null) : null) ?? [];
      return {
        status: 200,
        body: {
          scan_status: status,
          // Only a finished scan says how bad things are; anything else claims nothing.
          severity: status === "Success" ? (scan?.severity ?? "None") : "Unknown",
          total: status === "Success" ? (scan?.total ?? 0) : 0,
          fixable: status === "Success" ? (scan?.fixable ?? 0) : 0,
          vulnerabilities,
        },
      };
    },

    async setVisibility({ path, body }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      await setRepositoryVisibility(db, repo.id, body.public);
      return { status: 200 };
    },

    async getTagImmutability({ path }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      return { status: 200, body: { tag_patterns: repo.immutableTagPatterns } };
    },

    async setTagImmutability({ path, body }, context) {
      const { orgId } = controlCaller(context);
      const repo = await repository(orgId, path.repo);
      const patterns = [...new Set(body.tag_patterns)];
      await db
        .update(registryRepositories)
        .set({ immutableTagPatterns: patterns })
        .where(eq(registryRepositories.id, repo.id));
      return { status: 200, body: { tag_patterns: patterns } };
    },

    async getQuota(_input, context) {
      const { orgId } = controlCaller(context);
      const [quota] = await db.select().from(registryQuotas).where(eq(registryQuotas.orgId, orgId));
      return {
        status: 200,
        body: { limit_bytes: quota?.limitBytes ?? null, used_bytes: await storedBytes(db, orgId) },
      };
    },

    async setQuota({ body }, context) {
      const { orgId } = controlCaller(context);
      if (body.limit_bytes === null) await db.delete(registryQuotas).where(eq(registryQuotas.orgId, orgId));
      else {
        await db
          .insert(registryQuotas)
          .values({ orgId, limitBytes: body.limit_bytes })
          .onConflictDoUpdate({ target: registryQuotas.orgId, set: { limitBytes: body.limit_bytes } });
      }
      return { status: 200, body: { limit_bytes: body.limit_bytes, used_bytes: await storedBytes(db, orgId) } };
    },
  };
}
