import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { and, asc, eq, sql } from "drizzle-orm";
import { organizations } from "../../auth/auth-schema.js";
import type { Database } from "../../db/database.js";
import { perDatabase } from "../../db/prepared-statements.js";
import { uuidV7 } from "../actions/run-keys.js";
import { nowMs } from "../../db/column-types.js";
import { runGitOk } from "./repository/index.js";
import { gitRepositories } from "./git-schema.js";

export type RepositoryRow = typeof gitRepositories.$inferSelect & { readonly orgSlug: string };

/** Where a repository's bare git directory lives. */
export function repositoryGitDir(dataDir: string, orgId: string, repoId: string): string {
  return join(dataDir, "git", orgId, `${repoId}.git`);
}

const columns = {
  id: gitRepositories.id,
  orgId: gitRepositories.orgId,
  name: gitRepositories.name,
  visibility: gitRepositories.visibility,
  defaultBranch: gitRepositories.defaultBranch,
  sizeLimitBytes: gitRepositories.sizeLimitBytes,
  packCountLimit: gitRepositories.packCountLimit,
  sizeBytes: gitRepositories.sizeBytes,
  packCount: gitRepositories.packCount,
  lfsBytes: gitRepositories.lfsBytes,
  createdAt: gitRepositories.createdAt,
  updatedAt: gitRepositories.updatedAt,
  orgSlug: organizations.name,
};

// Every request of the git wire looks its repository up: prepared statements.
const repositoryById = perDatabase((db) =>
  db
    .select(columns)
    .from(gitRepositories)
    .innerJoin(organizations, eq(organizations.id, gitRepositories.orgId))
    .where(eq(gitRepositories.id, sql.placeholder("repoId")))
    .prepare("git_repository_by_id"),
);
const repositoryByName = perDatabase((db) =>
  db
    .select(columns)
    .from(gitRepositories)
    .innerJoin(organizations, eq(organizations.id, gitRepositories.orgId))
    .where(and(eq(organizations.name, sql.placeholder("orgSlug")), eq(gitRepositories.name, sql.placeholder("name"))))
    .prepare("git_repository_by_name"),
);

/** A repository by id, with its organization's slug; undefined when there is none. */
export async function findRepositoryById(db: Database, repoId: string): Promise<RepositoryRow | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(repoId)) return undefined;
  const [row] = await repositoryById(db).execute({ repoId: repoId.toLowerCase() });
  return row;
}

/** The organization's repositories, by name. */
export function listRepositories(db: Database, orgId: string): Promise<RepositoryRow[]> {
  return db
    .select(columns)
    .from(gitRepositories)
    .innerJoin(organizations, eq(organizations.id, gitRepositories.orgId))
    .where(eq(gitRepositories.orgId, orgId))
    .orderBy(asc(gitRepositories.name));
}

/** A repository by its human address `{org_slug}/{name}`. */
export async function findRepositoryByName(
  db: Database,
  orgSlug: string,
  name: string,
): Promise<RepositoryRow | undefined> {
  const [row] = await repositoryByName(db).execute({ orgSlug, name });
  return row;
}

export interface NewRepository {
  readonly orgId: string;
  readonly name: string;
  readonly defaultBranch: string;
  readonly visibility?: "private" | "public";
  readonly sizeLimitBytes?: number | null;
  readonly packCountLimit?: number | null;
}

/**
 * Creates the row and the bare repository together: the row is inserted in a transaction that only
 * commits once `git init --bare` succeeded, and a failed insert removes the directory again.
 */
export async function createRepository(db: Database, dataDir: string, repo: NewRepository): Promise<string> {
  const id = uuidV7();
  const gitDir = repositoryGitDir(dataDir, repo.orgId, id);
  try {
    await db.transaction(async (tx) => {
      await tx.insert(gitRepositories).values({
        id,
        orgId: repo.orgId,
        name: repo.name,
        defaultBranch: repo.defaultBranch,
        visibility: repo.visibility ?? "private",
        sizeLimitBytes: repo.sizeLimitBytes ?? null,
        packCountLimit: repo.packCountLimit ?? null,
      });
      await mkdir(gitDir, { recursive: true });
      await runGitOk(gitDir, ["init", "--bare", "--quiet"]);
      await runGitOk(gitDir, ["symbolic-ref", "HEAD", `refs/heads/${repo.defaultBranch}`]);
      // What partial clones and atomic pushes need from the server side.
      await runGitOk(gitDir, ["config", "uploadpack.allowFilter", "true"]);
      await runGitOk(gitDir, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
      await runGitOk(gitDir, ["config", "receive.advertiseAtomic", "true"]);
    });
  } catch (error) {
    await rm(gitDir, { recursive: true, force: true });
    throw error;
  }
  return id;
}

/**
 * Deletes the row (its protection rules go with it), then the bare repository. A crash between the
 * two leaves a directory no row names, under an id never given again: nothing can reach it.
 */
export async function deleteRepository(db: Database, dataDir: string, repo: RepositoryRow): Promise<void> {
  await db.delete(gitRepositories).where(eq(gitRepositories.id, repo.id));
  await rm(repositoryGitDir(dataDir, repo.orgId, repo.id), { recursive: true, force: true });
}

export async function setRepositoryVisibility(
  db: Database,
  repoId: string,
  visibility: "private" | "public",
): Promise<void> {
  await db.update(gitRepositories).set({ visibility, updatedAt: nowMs }).where(eq(gitRepositories.id, repoId));
}

/** Points HEAD (what clones check out) and the row at `branch`, which the caller checked exists. */
export async function setDefaultBranch(db: Database, dataDir: string, repo: RepositoryRow, branch: string) {
  await db.transaction(async (tx) => {
    await tx
      .update(gitRepositories)
      .set({ defaultBranch: branch, updatedAt: nowMs })
      .where(eq(gitRepositories.id, repo.id));
    await runGitOk(repositoryGitDir(dataDir, repo.orgId, repo.id), ["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  });
}

export async function setRepositoryQuotas(
  db: Database,
  repoId: string,
  quotas: { readonly sizeLimitBytes: number | null; readonly packCountLimit: number | null },
): Promise<void> {
  await db
    .update(gitRepositories)
    .set({ ...quotas, updatedAt: nowMs })
    .where(eq(gitRepositories.id, repoId));
}
