import { eq } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { nowMs } from "../../db/column-types.js";
import { repositorySize } from "./repository/index.js";
import { gitRepositories } from "./git-schema.js";

/** Stores the repository's size and pack count as `count-objects -v` sees them after a push. */
export async function refreshRepositorySize(db: Database, repoId: string, gitDir: string): Promise<void> {
  const size = await repositorySize(gitDir);
  await db
    .update(gitRepositories)
    .set({ sizeBytes: size.size_bytes, packCount: size.pack_count, updatedAt: nowMs })
    .where(eq(gitRepositories.id, repoId));
}
