import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../../db/database.js";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { registryManifests, registryRepositories, registryTags } from "../registry-schema.js";
import { readManifest } from "./manifest-reads.js";

let database: TestDatabase;
let repositoryId: string;
const digest = `sha256:${"a".repeat(64)}`;
const content = new TextEncoder().encode('{"schemaVersion":2}');

beforeAll(async () => {
  database = await openTestDatabase();
  const orgId = await database.createOrganization();
  const [repository] = await database.db
    .insert(registryRepositories)
    .values({ orgId, name: "app" })
    .returning({ id: registryRepositories.id });
  repositoryId = repository!.id;
  await database.db.insert(registryManifests).values({
    repositoryId,
    digest,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    content,
    totalSize: content.length,
  });
  await database.db.insert(registryTags).values({ repositoryId, name: "v1", manifestDigest: digest });
}, 60_000);
afterAll(async () => {
  await database?.close();
});

async function pulls() {
  const [repository] = await database.db
    .select({ count: registryRepositories.pullCount })
    .from(registryRepositories)
    .where(eq(registryRepositories.id, repositoryId));
  const [tag] = await database.db.select({ at: registryTags.pulledAt }).from(registryTags);
  const [manifest] = await database.db.select({ at: registryManifests.pulledAt }).from(registryManifests);
  return { count: repository!.count, tagPulledAt: tag!.at, manifestPulledAt: manifest!.at };
}

describe("readManifest", () => {
  it("reads by tag or digest without counting a pull, and finds nothing for an unknown reference", async () => {
    for (const reference of [{ tag: "v1" }, { digest }]) {
      const manifest = await readManifest(database.db, repositoryId, reference, false);
      expect(manifest).toMatchObject({ digest, mediaType: "application/vnd.oci.image.manifest.v1+json" });
      expect(Buffer.from(manifest!.content).equals(Buffer.from(content))).toBe(true);
    }
    expect(await readManifest(database.db, repositoryId, { tag: "v2" }, true)).toBeUndefined();
    expect(await readManifest(database.db, repositoryId, { digest: `sha256:${"b".repeat(64)}` }, true)).toBeUndefined();
    expect(await pulls()).toEqual({ count: 0, tagPulledAt: null, manifestPulledAt: null });
  });

  it("counts a pull on the repository, the manifest and the tag used, in the same statement", async () => {
    const before = Date.now();
    const byTag = await readManifest(database.db, repositoryId, { tag: "v1" }, true);
    expect(byTag?.digest).toBe(digest);
    expect(Buffer.from(byTag!.content).equals(Buffer.from(content))).toBe(true);
    const afterTag = await pulls();
    expect(afterTag.count).toBe(1);
    expect(afterTag.tagPulledAt).toBeGreaterThanOrEqual(before);
    expect(afterTag.manifestPulledAt).toBe(afterTag.tagPulledAt);

    expect((await readManifest(database.db, repositoryId, { digest }, true))?.digest).toBe(digest);
    const afterDigest = await pulls();
    expect(afterDigest.count).toBe(2);
    // A pull by digest names no tag.
    expect(afterDigest.tagPulledAt).toBe(afterTag.tagPulledAt);
  });

  it("relaxes the commit of a pull only, never the connection's later statements", async () => {
    await readManifest(database.db, repositoryId, { tag: "v1" }, true);
    const [setting] = resultRows<{ synchronous_commit: string }>(
      await database.db.execute(sql`show synchronous_commit`),
    );
    expect(setting?.synchronous_commit).toBe("on");
  });
});
