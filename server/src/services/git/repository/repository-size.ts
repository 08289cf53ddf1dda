import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** The repository's size accounting, as on the repository record. */
export interface RepositorySize {
  size_bytes: number;
  pack_count: number;
}

const LOOSE_FOLDER = /^[0-9a-f]{2}$/;

async function entries(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    // Gone between the listing and the stat: a repack or gc removed it.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
}

/**
 * Bytes of the object store: loose objects and everything in `objects/pack` (packs, their indexes,
 * and files a gc leaves), all of which count against the repository's quota until a gc removes
 * them. Read from the file system rather than `git count-objects`: measured after every push, a
 * process start costs more than the listing.
 */
export async function repositorySize(gitDir: string): Promise<RepositorySize> {
  const objects = join(gitDir, "objects");
  let size = 0;
  let packs = 0;
  for (const name of await entries(objects)) {
    if (!LOOSE_FOLDER.test(name)) continue;
    const folder = join(objects, name);
    const sizes = await Promise.all((await entries(folder)).map((file) => sizeOf(join(folder, file))));
    for (const bytes of sizes) size += bytes;
  }
  const packFolder = join(objects, "pack");
  for (const file of await entries(packFolder)) {
    size += await sizeOf(join(packFolder, file));
    if (file.endsWith(".pack")) packs++;
  }
  return { size_bytes: size, pack_count: packs };
}
