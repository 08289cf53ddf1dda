import { randomBytes } from "node:crypto";
import { create, toJsonString, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { eq } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConfigureEngineRequestSchema,
  DeleteEngineRequestSchema,
  EngineSchema,
  GetEngineRequestSchema,
  ListVectorDbInstancesRequestSchema,
} from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { EmbedderRegistry } from "../../embeddings/embedder-registry.js";
import { NO_EMBEDDINGS } from "../../embeddings/embeddings-config.js";
import { engineStore } from "./engine-store.js";
import { allowedAddress } from "./external-database.js";
import { createVectorService } from "./vector-service.js";
import { vectorEngines } from "./vector-schema.js";
import { connectErrorOf, openVectorFixture, type VectorFixture } from "./vector-test-fixture.js";

let fixture: VectorFixture;
beforeAll(async () => {
  fixture = await openVectorFixture();
});
afterAll(() => fixture?.close());

async function caller() {
  const orgId = await fixture.database.createOrganization();
  const context = fixture.contextOf(orgId);
  const service = fixture.service.implementation;
  return {
    orgId,
    configure: async (init: MessageInitShape<typeof ConfigureEngineRequestSchema>) =>
      create(EngineSchema, await service.configureEngine(create(ConfigureEngineRequestSchema, init), context)),
    get: async (bucket: string) =>
      create(EngineSchema, await service.getEngine(create(GetEngineRequestSchema, { bucket }), context)),
    remove: async (bucket: string, deleteDatabase = false) => {
      await service.deleteEngine(create(DeleteEngineRequestSchema, { bucket, deleteDatabase }), context);
    },
    instances: async () =>
      (await service.listVectorDbInstances(create(ListVectorDbInstancesRequestSchema), context)).instances ?? [],
  };
}

/** Waits for a condition, failing after about two seconds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the condition did not come true");
}

/** Runs the provisioning worker until nothing is left to claim. */
async function provisionAll(): Promise<void> {
  while (await fixture.service.provisioning.runOnce());
}

describe("auto engines", () => {
  it("go PENDING, then ACTIVE with a database of their own, listed as an instance", async () => {
    const me = await caller();
    const engine = await me.configure({ bucket: "docs", mode: "auto" });
    expect(engine).toMatchObject({ bucket: "docs", mode: "auto", status: "PENDING", errorMessage: "" });
    expect(engine.serviceId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await me.instances())[0]).toMatchObject({
      serviceId: engine.serviceId,
      status: "creating",
      serviceType: "database",
    });

    await provisionAll();
    const active = await me.get("docs");
    expect(active).toMatchObject({
      status: "ACTIVE",
      engineId: engine.engineId,
      vectordbDbName: engine.vectordbDbName,
    });
    expect(fixture.host.created.has(active.vectordbDbName)).toBe(true);
    const [instance] = await me.instances();
    expect(instance).toMatchObject({ serviceId: engine.serviceId, name: "docs", status: "running" });
    expect(new Date(instance?.createdAt ?? 0).toISOString()).toBe(instance?.createdAt);

    // The same call again provisions nothing new.
    const again = await me.configure({ bucket: "docs", mode: "AUTO" });
    expect(again).toMatchObject({ engineId: engine.engineId, status: "ACTIVE", serviceId: engine.serviceId });
    expect(await me.instances()).toHaveLength(1);
  });

  it("are PROVISIONING while the database is being made", async () => {
    const me = await caller();
    let release = () => {};
    fixture.host.gate = new Promise<void>((resolve) => (release = resolve));
    try {
      await me.configure({ bucket: "slow", mode: "auto" });
      const running = fixture.service.provisioning.runOnce();
      await until(async () => (await me.get("slow")).status === "PROVISIONING");
      release();
      await running;
    } finally {
      fixture.host.gate = undefined;
      release();
    }
    expect((await me.get("slow")).status).toBe("ACTIVE");
  });

  it("end in ERROR with a message after the last failed attempt, and can be configured again", async () => {
    const me = await caller();
    fixture.host.failure = Object.assign(new Error("permission denied to create database"), { code: "42501" });
    try {
      const engine = await me.configure({ bucket: "denied", mode: "auto" });
      expect(await fixture.service.provisioning.runOnce(engine.engineId)).toBe(true);
      // The first failure is retried later: the engine is still on its way.
      expect((await me.get("denied")).status).toBe("PROVISIONING");
      await fixture.database.db
        .update(vectorEngines)
        .set({ leaseExpiresAt: 0 })
        .where(eq(vectorEngines.id, engine.engineId));
      await fixture.service.provisioning.runOnce(engine.engineId);
    } finally {
      fixture.host.failure = undefined;
    }
    const failed = await me.get("denied");
    expect(failed.status).toBe("ERROR");
    expect(failed.errorMessage).toMatch(/may not create databases: grant it CREATEDB/);
    expect((await me.instances())[0]?.status).toBe("error");
    expect((await connectErrorOf(() => fixture.service.engineDatabase(me.orgId, "denied"))).code).toBe(
      Code.FailedPrecondition,
    );

    const retried = await me.configure({ bucket: "denied", mode: "auto" });
    expect(retried.status).toBe("PENDING");
    await provisionAll();
    expect(await me.get("denied")).toMatchObject({ status: "ACTIVE", errorMessage: "" });
    // The failed database went with the failed configuration.
    expect((await me.instances()).map((i) => i.status)).toEqual(["running"]);
  });

  it("are taken over from a process that stopped half-way once its lease lapses", async () => {
    const me = await caller();
    const engine = await me.configure({ bucket: "orphan", mode: "auto" });
    // Another process claimed the engine and died without finishing.
    await fixture.database.db.transaction((tx) => engineStore(tx).claim("crashed-process", 60_000, engine.engineId));
    expect(await fixture.service.provisioning.runOnce(engine.engineId)).toBe(false);
    await fixture.database.db
      .update(vectorEngines)
      .set({ leaseExpiresAt: 0 })
      .where(eq(vectorEngines.id, engine.engineId));
    expect(await fixture.service.provisioning.runOnce(engine.engineId)).toBe(true);
    expect((await me.get("orphan")).status).toBe("ACTIVE");
  });

  it("configured twice at once make one engine and one database", async () => {
    const me = await caller();
    const [a, b] = await Promise.all([
      me.configure({ bucket: "race", mode: "auto" }),
      me.configure({ bucket: "race", mode: "auto" }),
    ]);
    expect(a?.engineId).toBe(b?.engineId);
    expect(await me.instances()).toHaveLength(1);
    await provisionAll();
  });

  it("kept by a deletion during provisioning become usable", async () => {
    const me = await caller();
    let release = () => {};
    fixture.host.gate = new Promise<void>((resolve) => (release = resolve));
    try {
      const kept = await me.configure({ bucket: "kept", mode: "auto" });
      const running = fixture.service.provisioning.runOnce(kept.engineId);
      await until(async () => (await me.get("kept")).status === "PROVISIONING");
      const removing = me.remove("kept");
      release();
      await Promise.all([removing, running]);
      expect((await me.instances()).find((i) => i.serviceId === kept.serviceId)?.status).toBe("running");
      expect(fixture.host.created.has(kept.vectordbDbName)).toBe(true);
    } finally {
      fixture.host.gate = undefined;
      release();
    }
  });

  it("kept by a deletion before any process claimed them become usable", async () => {
    const me = await caller();
    const kept = await me.configure({ bucket: "unclaimed", mode: "auto" });
    await me.remove("unclaimed");
    expect((await me.instances()).find((i) => i.serviceId === kept.serviceId)?.status).toBe("running");
    expect(fixture.host.created.has(kept.vectordbDbName)).toBe(true);
    expect(await fixture.service.provisioning.runOnce(kept.engineId)).toBe(false);
  });

  it("reconfigured before they are ACTIVE leave no database behind", async () => {
    const me = await caller();
    const target = await me.configure({ bucket: "target", mode: "auto" });
    await provisionAll();
    const switched = await me.configure({ bucket: "switched", mode: "auto" });
    const picked = await me.configure({ bucket: "switched", mode: "pick", serviceId: target.serviceId });
    expect(picked).toMatchObject({ engineId: switched.engineId, mode: "pick", status: "ACTIVE" });
    expect((await me.instances()).map((i) => i.serviceId)).toEqual([target.serviceId]);
    expect(await fixture.service.provisioning.runOnce(switched.engineId)).toBe(false);
  });

  it("are created implicitly on first use by ingestion", async () => {
    const me = await caller();
    expect(await fixture.service.existingCollection(me.orgId, "fresh", "vc_0", 4)).toBeUndefined();
    expect((await connectErrorOf(() => me.get("fresh"))).code).toBe(Code.NotFound);
    const { engine, executor } = await fixture.service.engineDatabase(me.orgId, "fresh");
    expect(engine).toMatchObject({ mode: "auto", status: "ACTIVE", implicit: true });
    expect(await executor.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(await me.get("fresh")).toMatchObject({ mode: "auto", status: "ACTIVE" });
    const collection = await fixture.service.existingCollection(me.orgId, "fresh", "vc_0", 4);
    expect(await collection?.count()).toBe(0);
  });
});

describe("pick engines and deletion", () => {
  it("attach to another bucket's database; deletion keeps or drops it", async () => {
    const me = await caller();
    const owner = await me.configure({ bucket: "owner", mode: "auto" });
    await provisionAll();
    const picked = await me.configure({ bucket: "guest", mode: "pick", serviceId: owner.serviceId });
    expect(picked).toMatchObject({
      mode: "pick",
      status: "ACTIVE",
      serviceId: owner.serviceId,
      vectordbDbName: owner.vectordbDbName,
    });

    expect((await connectErrorOf(() => me.remove("guest", true))).code).toBe(Code.FailedPrecondition);
    const inUse = await connectErrorOf(() => me.remove("owner", true));
    expect(inUse.code).toBe(Code.FailedPrecondition);
    expect(inUse.rawMessage).toMatch(/guest/);

    await me.remove("guest");
    expect((await connectErrorOf(() => me.get("guest"))).code).toBe(Code.NotFound);
    await me.remove("owner", true);
    expect(await me.instances()).toEqual([]);
    expect(fixture.host.created.has(owner.vectordbDbName)).toBe(false);
  });

  it("refuse unknown, foreign and unfinished databases", async () => {
    const me = await caller();
    const other = await caller();
    const foreign = await other.configure({ bucket: "theirs", mode: "auto" });
    expect(
      (await connectErrorOf(() => me.configure({ bucket: "b", mode: "pick", serviceId: foreign.serviceId }))).code,
    ).toBe(Code.NotFound);
    const mine = await me.configure({ bucket: "mine", mode: "auto" });
    expect(
      (await connectErrorOf(() => me.configure({ bucket: "b", mode: "pick", serviceId: mine.serviceId }))).code,
    ).toBe(Code.FailedPrecondition);
    expect((await connectErrorOf(() => me.configure({ bucket: "b", mode: "pick", serviceId: "nope" }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await connectErrorOf(() => me.configure({ bucket: "b", mode: "pick" }))).rawMessage).toMatch(/service_id/);
    await provisionAll();
  });
});

describe("requests", () => {
  it("are checked field by field, and another organization's engine is NOT_FOUND", async () => {
    const me = await caller();
    const other = await caller();
    await me.configure({ bucket: "private", mode: "auto" });
    const cases: Array<[MessageInitShape<typeof ConfigureEngineRequestSchema>, RegExp]> = [
      [{ bucket: "", mode: "auto" }, /bucket is required/],
      [{ bucket: "b", mode: "" }, /mode is required/],
      [{ bucket: "b", mode: "managed" }, /mode must be auto, external or pick/],
      [{ bucket: "b", mode: "auto", vectordbEndpoint: "db.example.com" }, /vectordb_endpoint applies to/],
      [
        { bucket: "b", mode: "external", vectordbPort: 5432, vectordbDbName: "d", vectordbUser: "u" },
        /vectordb_endpoint is required/,
      ],
      [
        {
          bucket: "b",
          mode: "external",
          vectordbEndpoint: "http://x/",
          vectordbPort: 5432,
          vectordbDbName: "d",
          vectordbUser: "u",
        },
        /host name or an IP/,
      ],
      [
        {
          bucket: "b",
          mode: "external",
          vectordbEndpoint: "db.example.com",
          vectordbPort: 70000,
          vectordbDbName: "d",
          vectordbUser: "u",
        },
        /vectordb_port/,
      ],
      [
        { bucket: "b", mode: "external", vectordbEndpoint: "db.example.com", vectordbPort: 5432, vectordbUser: "u" },
        /vectordb_db_name/,
      ],
      [
        { bucket: "b", mode: "external", vectordbEndpoint: "db.example.com", vectordbPort: 5432, vectordbDbName: "d" },
        /vectordb_user/,
      ],
    ];
    for (const [request, message] of cases) {
      const error = await connectErrorOf(() => me.configure(request));
      expect(error.code, JSON.stringify(request)).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(message);
    }
    expect((await connectErrorOf(() => other.get("private"))).code).toBe(Code.NotFound);
    expect((await connectErrorOf(() => other.remove("private"))).code).toBe(Code.NotFound);
    expect(await other.instances()).toEqual([]);
    await provisionAll();
  });
});

describe("external engines", () => {
  it("refuse loopback and private endpoints unless private networks are allowed", async () => {
    const strict = createVectorService({
      db: fixture.database.db,
      box: createSecretBox(new Uint8Array(randomBytes(32))),
      databaseUrl: undefined,
      dataDir: "memory://",
      allowPrivateNetwork: false,
      embedders: new EmbedderRegistry({ config: NO_EMBEDDINGS }),
      collections: fixture.directory,
      host: fixture.host,
    });
    const orgId = await fixture.database.createOrganization();
    for (const endpoint of ["127.0.0.1", "localhost", "10.1.2.3", "[::1]", "169.254.169.254"]) {
      const request = create(ConfigureEngineRequestSchema, {
        bucket: "b",
        mode: "external",
        vectordbEndpoint: endpoint,
        vectordbPort: 5432,
        vectordbDbName: "vectors",
        vectordbUser: "app",
      });
      const error = await connectErrorOf(async () =>
        strict.implementation.configureEngine(request, fixture.contextOf(orgId)),
      );
      expect(error.code, endpoint).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/^vectordb_endpoint .* which this server does not connect to/);
    }
    // A public name resolving to a private address is refused after the lookup, before any connection.
    const resolved = await connectErrorOf(() =>
      allowedAddress("db.example.com", { allowPrivateNetwork: false, resolve: async () => ["192.168.1.5"] }),
    );
    expect(resolved.rawMessage).toMatch(/db\.example\.com \(192\.168\.1\.5\) is a private/);
    expect(
      await allowedAddress("db.example.com", { allowPrivateNetwork: false, resolve: async () => ["93.184.216.34"] }),
    ).toBe("93.184.216.34");
  });

  it("refuse an unreachable database with FAILED_PRECONDITION and store nothing", async () => {
    const me = await caller();
    const error = await connectErrorOf(() =>
      me.configure({
        bucket: "ext",
        mode: "external",
        vectordbEndpoint: "127.0.0.1",
        vectordbPort: 1,
        vectordbDbName: "v",
        vectordbUser: "u",
      }),
    );
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toBe("cannot reach the vector database at 127.0.0.1:1: connection refused");
    expect((await connectErrorOf(() => me.get("ext"))).code).toBe(Code.NotFound);
  });

  const serverUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!serverUrl)(
    "connect to PostgreSQL with pgvector on loopback, the password sealed and never returned",
    async () => {
      const url = new URL(serverUrl as string);
      const name = `ext_${randomBytes(6).toString("hex")}`;
      const admin = postgres(serverUrl as string, { max: 1, onnotice: () => {} });
      await admin.unsafe(`CREATE DATABASE ${name}`);
      try {
        const me = await caller();
        const target = {
          bucket: "ext",
          mode: "external",
          vectordbEndpoint: url.hostname,
          vectordbPort: Number(url.port || 5432),
          vectordbDbName: name,
          vectordbUser: decodeURIComponent(url.username),
          vectordbPassword: decodeURIComponent(url.password) || "pw-not-checked-by-trust",
        };
        const missing = await connectErrorOf(() => me.configure({ ...target, vectordbDbName: `${name}_missing` }));
        expect(missing.code).toBe(Code.FailedPrecondition);
        expect(missing.rawMessage).toMatch(/does not exist/);

        const engine = await me.configure(target);
        expect(engine).toMatchObject({
          mode: "external",
          status: "ACTIVE",
          vectordbEndpoint: url.hostname,
          vectordbDbName: name,
        });
        expect(toJsonString(EngineSchema, engine)).not.toContain(target.vectordbPassword);
        const [row] = await fixture.database.db
          .select()
          .from(vectorEngines)
          .where(eq(vectorEngines.id, engine.engineId));
        expect(Buffer.from(row!.sealedPassword!).toString("latin1")).not.toContain(target.vectordbPassword);
        expect((await me.configure(target)).updatedAt).toBe(engine.updatedAt);

        // The extension was created in the external database, and ingestion reaches it.
        const { executor } = await fixture.service.engineDatabase(me.orgId, "ext");
        expect(await executor.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).toHaveLength(1);
        await me.remove("ext");
      } finally {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    },
  );
});
