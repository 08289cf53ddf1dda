import { runGitOk } from "./git-command.js";

/** The repository's size accounting, as on the repository record. */
export interface RepositorySize {
  size_bytes: number;
  pack_count: number;
}

/**
 * Disk use of the object store from `count-objects -v`: loose objects, packs and garbage together,
 * since all of them count against the repository's quota until a gc removes them.
 */
export async function repositorySize(gitDir: string): Promise<RepositorySize> {
  const output = await runGitOk(gitDir, ["count-objects", "-v"]);
  const values = new Map<string, number>();
  for (const line of output.split("\n")) {
    const match = /^([a-z-]+): (\d+)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) values.set(match[1], Number(match[2]));
  }
  const kib = (values.get("size") ?? 0) + (values.get("size-pack") ?? 0) + (values.get("size-garbage") ?? 0);
  return { size_bytes: kib * 1024, pack_count: values.get("packs") ?? 0 };
}
