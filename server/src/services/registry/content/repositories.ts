import { and, eq, sql } from "drizzle-orm";
import { organizations } from "../../../auth/auth-schema.js";
import type { Database } from "../../../db/database.js";
import { perDatabase } from "../../../db/prepared-statements.js";
import type { RepositoryFacts } from "../access/registry-access.js";
import { OciError } from "../oci/oci-error.js";
import type { OciRepositoryTarget } from "../oci/oci-route.js";
import { announceRepositoryChange, repositoryChangeCommitted, type RepositoryCache } from "./repository-cache.js";
import { registryRepositories } from "../registry-schema.js";

/** One path component of a repository name (distribution's reference grammar). */
const component = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const namePattern = new RegExp(`^${component}(?:/${component})+$`);
const MAX_NAME_LENGTH = 255;

/** `<org>/<repo...>` split and checked, or NAME_INVALID naming the rule it breaks. */
export function parseRepositoryName(fullName: string): { orgName: string; name: string } {
  if (fullName.length > MAX_NAME_LENGTH || !namePattern.test(fullName)) {
    throw new OciError(
      "NAME_INVALID",
      `repository name ${JSON.stringify(fullName.slice(0, 300))} is invalid: expected <organization>/<repository>, lower-case components of [a-z0-9] joined by ".", "_", "__" or "-", at most ${MAX_NAME_LENGTH} characters`,
    );
  }
  const slash = fullName.indexOf("/");
  return { orgName: fullName.slice(0, slash), name: fullName.slice(slash + 1) };
}

export interface ResolvedRepository {
  readonly target: OciRepositoryTarget;
  readonly facts: RepositoryFacts;
}

// Every request of the distribution protocol resolves its repository: a prepared statement.
const repositoryByName = perDatabase((db) =>
  db
    .select({ orgId: organizations.id, repositoryId: registryRepositories.id, public: registryRepositories.public })
    .from(organizations)
    .leftJoin(
      registryRepositories,
      and(eq(registryRepositories.orgId, organizations.id), eq(registryRepositories.name, sql.placeholder("name"))),
    )
    .where(eq(organizations.name, sql.placeholder("orgName")))
    .prepare("registry_repository_by_name"),
);

/** The organization and repository a name designates, as far as they exist; kept in `cache` once it exists. */
export async function resolveRepository(
  db: Database,
  fullName: string,
  cache?: RepositoryCache,
): Promise<ResolvedRepository> {
  const { orgName, name } = parseRepositoryName(fullName);
  const cached = cache?.get(fullName);
  if (cached) return cached;
  const ticket = cache?.ticket() ?? 0;
  const [row] = await repositoryByName(db).execute({ orgName, name });
  const resolved = {
    target: { orgId: row?.orgId ?? "", orgName, name, fullName, repositoryId: row?.repositoryId ?? undefined },
    facts: { orgId: row?.orgId, fullName, exists: Boolean(row?.repositoryId), public: row?.public ?? false },
  };
  if (row?.repositoryId) cache?.put(fullName, resolved, ticket);
  return resolved;
}

/** The repository's id, creating it on the first push. */
export async function ensureRepository(
  db: Pick<Database, "insert" | "select">,
  target: OciRepositoryTarget,
): Promise<string> {
  if (target.repositoryId) return target.repositoryId;
  const [created] = await db
    .insert(registryRepositories)
    .values({ orgId: target.orgId, name: target.name })
    .onConflictDoUpdate({
      target: [registryRepositories.orgId, registryRepositories.name],
      // A no-op update, so the existing row's id comes back when another push created it first.
      set: { updatedAt: sql`${registryRepositories.updatedAt}` },
    })
    .returning({ id: registryRepositories.id });
  return created!.id;
}

/**
 * Makes the repository public (anonymous pulls) or private. This process's next request, and
 * every other process's once the change notice arrives, decides with the new visibility.
 */
export async function setRepositoryVisibility(db: Database, repositoryId: string, visible: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(registryRepositories)
      .set({ public: visible, updatedAt: Date.now() })
      .where(eq(registryRepositories.id, repositoryId));
    await announceRepositoryChange(tx, { repositoryId });
  });
  repositoryChangeCommitted(db, { repositoryId });
}

/** The repository's id, or NAME_UNKNOWN when it was never pushed to. */
export function existingRepository(target: OciRepositoryTarget): string {
  if (!target.repositoryId)
    throw new OciError("NAME_UNKNOWN", `repository ${target.fullName} is not known to this registry`);
  return target.repositoryId;
}
