import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDatabase } from "../../../../test/test-database.js";
import { openTwoProcesses, within, type TwoProcesses } from "../../../../test/two-processes.js";
import type { Database, DatabaseHandle } from "../../../db/database.js";
import { registryRepositories } from "../registry-schema.js";
import { ensureRepository, resolveRepository, setRepositoryVisibility } from "./repositories.js";
import { createRepositoryCache, followRepositoryChanges, type RepositoryCache } from "./repository-cache.js";

// Two "processes" on one database, each with its own pool, repository cache and listener, the way
// two server replicas run; "here" makes the changes. On the embedded database there is one
// process: both names are the same one.

interface Process {
  readonly db: Database;
  readonly cache: RepositoryCache;
  stop(): Promise<void>;
}

async function processOn(handle: DatabaseHandle): Promise<Process> {
  const cache = createRepositoryCache();
  return { db: handle.db, cache, stop: await followRepositoryChanges(handle, cache) };
}

let database: TestDatabase, here: Process, there: Process;
let processes: TwoProcesses<Process> | undefined;
beforeAll(async () => ({ database, here, there } = processes = await openTwoProcesses(processOn)));
afterAll(() => processes?.close());

async function newRepository(): Promise<{ fullName: string; repositoryId: string }> {
  const orgName = `org-${randomBytes(4).toString("hex")}`;
  const orgId = await database.createOrganization(orgName);
  const repositoryId = await ensureRepository(database.db, {
    orgId,
    orgName,
    name: "app",
    fullName: `${orgName}/app`,
    repositoryId: undefined,
  });
  return { fullName: `${orgName}/app`, repositoryId };
}

const resolveOn = (process: Process, fullName: string) => resolveRepository(process.db, fullName, process.cache);

describe(`repository cache across processes (${process.env.TEST_DATABASE_URL ? "postgres, two pools" : "embedded, one process"})`, () => {
  it("serves a resolved repository from memory: a row changed behind its back is not read again", async () => {
    const { fullName, repositoryId } = await newRepository();
    expect((await resolveOn(there, fullName)).facts.public).toBe(false);
    // Changed without a notice: only the cache still says private.
    await database.db
      .update(registryRepositories)
      .set({ public: true })
      .where(eq(registryRepositories.id, repositoryId));
    expect((await resolveOn(there, fullName)).facts.public).toBe(false);
    expect((await resolveRepository(there.db, fullName)).facts.public).toBe(true);
    expect((await resolveOn(there, fullName)).target.repositoryId).toBe(repositoryId);
  });

  it("applies a visibility change on the writer at once and on the other process within one second", async () => {
    const { fullName, repositoryId } = await newRepository();
    await resolveOn(here, fullName);
    await resolveOn(there, fullName);
    await setRepositoryVisibility(here.db, repositoryId, true);
    expect((await resolveOn(here, fullName)).facts.public).toBe(true);
    const took = await within(1000, async () => (await resolveOn(there, fullName)).facts.public);
    console.info(`the visibility change reached the other process's cache after ${took} ms`);
    await setRepositoryVisibility(here.db, repositoryId, false);
    expect((await resolveOn(here, fullName)).facts.public).toBe(false);
    await within(1000, async () => !(await resolveOn(there, fullName)).facts.public);
  });

  it("keeps nothing of a name that does not resolve to a repository, so its first push is seen at once", async () => {
    const orgName = `org-${randomBytes(4).toString("hex")}`;
    const orgId = await database.createOrganization(orgName);
    const before = there.cache.size;
    expect((await resolveOn(there, `${orgName}/later`)).facts.exists).toBe(false);
    expect((await resolveOn(there, `nobody-${orgName}/app`)).facts.orgId).toBeUndefined();
    expect(there.cache.size).toBe(before);
    // Another process creates it: no notice is sent, none is needed.
    await database.db.insert(registryRepositories).values({ orgId, name: "later" });
    expect((await resolveOn(there, `${orgName}/later`)).facts.exists).toBe(true);
  });

  it("reads an unknown notice as a change to everything", async () => {
    const { fullName } = await newRepository();
    await resolveOn(there, fullName);
    expect(there.cache.get(fullName)).toBeDefined();
    await database.db.execute(sql`select pg_notify('platform_registry_repositories', 'something new')`);
    await within(1000, async () => there.cache.get(fullName) === undefined);
  });
});
