import { rowChecksum, type UserRows } from "./user-rows.js";

/**
 * Compares the pool's users on both sides: the counts, then every row's checksum in id order.
 * Answers what differs first, or undefined when the copy is exact.
 */
export async function verifyCopy(source: UserRows, target: UserRows, batchSize: number): Promise<string | undefined> {
  const [sourceCount, targetCount] = await Promise.all([source.count(), target.count()]);
  if (sourceCount !== targetCount) return `the source holds ${sourceCount} users and the target ${targetCount}`;
  let cursor = "";
  for (;;) {
    const [mine, theirs] = await Promise.all([source.after(cursor, batchSize), target.after(cursor, batchSize)]);
    const length = Math.max(mine.length, theirs.length);
    if (length === 0) return undefined;
    for (let i = 0; i < length; i++) {
      const a = mine[i];
      const b = theirs[i];
      if (!a || !b || a.id !== b.id)
        return `user ${a?.id ?? b?.id} is missing from the ${a && (!b || a.id < b.id) ? "target" : "source"}`;
      if (rowChecksum(a) !== rowChecksum(b)) return `user ${a.id} differs between source and target`;
    }
    cursor = mine.at(-1)!.id;
  }
}
