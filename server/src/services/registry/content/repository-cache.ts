import { createFollowedCache, type FollowedCache, type FollowedCacheOptions } from "../../../cache/followed-cache.js";
import { createChangeNotices, type ChangeFollower } from "../../../db/change-notices.js";
import type { ResolvedRepository } from "./repositories.js";

/**
 * A change to what access decisions read of a repository (its visibility), as every process hears
 * it: one repository, or everything. A repository's name, id and organization never change once
 * it exists.
 */
export type RepositoryChange = { readonly repositoryId: string } | { readonly all: true };

/**
 * The repositories this process resolved, by full name: every request of the distribution protocol
 * resolves its repository, and each resolution read from the database cost about a millisecond of
 * the embedded database's thread. Only repositories that exist are kept: a name that resolves to
 * nothing may be pushed to by another process at any moment, which sends no notice.
 */
export type RepositoryCache = FollowedCache<string, ResolvedRepository> & ChangeFollower<RepositoryChange>;

export function createRepositoryCache(options: FollowedCacheOptions = {}): RepositoryCache {
  const cache = createFollowedCache<string, ResolvedRepository>(options);
  return Object.assign(cache, {
    apply(change: RepositoryChange) {
      if ("all" in change) cache.flush();
      else cache.forget((_, resolved) => resolved.target.repositoryId === change.repositoryId);
    },
  });
}

const notices = createChangeNotices<RepositoryChange>("platform_registry_repositories", {
  encode: (change) => ("all" in change ? "all" : `repository:${change.repositoryId}`),
  // Anything else reads as "everything changed", the safe reading.
  decode: (payload) =>
    payload.startsWith("repository:") && payload.length > 11 ? { repositoryId: payload.slice(11) } : { all: true },
});

/** Tells every process that a repository's access facts changed, inside the transaction that changes them. */
export const announceRepositoryChange = notices.announce;
/** Applies a committed repository change to this process's caches at once. */
export const repositoryChangeCommitted = notices.committed;
/** Keeps a repository cache in step with every process's changes. */
export const followRepositoryChanges = notices.follow;
