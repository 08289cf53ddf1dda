import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { Code, ConnectError } from "@connectrpc/connect";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// Environment variables and secrets are sealed at rest: read through the binary's API they are
// the values written, read from the server's database directly they are not there, and a sealed
// row moved to another organization does not open. A dedicated server, because the embedded
// database is read while the server is down.

interface RawDatabase {
  query<Row>(text: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

/** The server's database, opened directly: PostgreSQL beside the running server, the embedded one only while it is down. */
async function openServerDatabase(server: StartedServer): Promise<RawDatabase> {
  if (server.databaseUrl) {
    const client = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
    return {
      query: async <Row>(text: string, params: unknown[] = []) =>
        (await client.unsafe(text, params as never[])) as unknown as Row[],
      close: () => client.end(),
    };
  }
  const client = await PGlite.create({ dataDir: join(server.dataDir, "pgdata"), extensions: { vector } });
  return {
    query: async <Row>(text: string, params: unknown[] = []) => (await client.query<Row>(text, params)).rows,
    close: () => client.close(),
  };
}

/** The embedded database's files (`pg_wal` with them unless left out) that contain `text`. */
async function filesContaining(dataDir: string, text: string, { withWal = true } = {}): Promise<string[]> {
  const root = join(dataDir, "pgdata");
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries.filter((e) => e.isFile())) {
    const path = join(entry.parentPath, entry.name);
    if (!withWal && path.startsWith(join(root, "pg_wal"))) continue;
    // The running server may remove a file (a temporary one) between the listing and the read.
    const content = await readFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return Buffer.alloc(0);
      throw error;
    });
    if (content.includes(Buffer.from(text))) found.push(path.slice(root.length + 1));
  }
  return found;
}

const marker = (what: string) => `${what}-${randomBytes(12).toString("hex")}`;
const values = {
  tenant: marker("tenant"),
  imported: marker("imported"),
  overlay: marker("overlay"),
  legacy: marker("legacy"),
  secret: marker("secret"),
};
const tenantKey = `SEALED_${randomBytes(6).toString("hex").toUpperCase()}`;

let server: StartedServer;
let orgs: { a: { id: string; client: PlatformClient }; b: { id: string; client: PlatformClient } };

async function organization(name: string) {
  const created = await runAdmin(server.dataDir, ["create-org", name]);
  const { organization: org, apiKey } = created.json as { organization: { id: string }; apiKey: string };
  return { id: org.id, apiKey };
}

function clientsFor(keys: { a: { id: string; apiKey: string }; b: { id: string; apiKey: string } }) {
  const client = (apiKey: string, organization: string) =>
    createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization });
  return {
    a: { id: keys.a.id, client: client(keys.a.apiKey, "sealed-a") },
    b: { id: keys.b.id, client: client(keys.b.apiKey, "sealed-b") },
  };
}
let keys: Parameters<typeof clientsFor>[0];

beforeAll(async () => {
  server = await startPlatformServer();
  keys = { a: await organization("sealed-a"), b: await organization("sealed-b") };
  orgs = clientsFor(keys);
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

async function failure(work: () => Promise<unknown>): Promise<ConnectError> {
  return work().then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => ConnectError.from(error),
  );
}

describe("values sealed at rest, through the binary", () => {
  it("serves environment values written through every method, and keeps them out of the embedded database's files", async () => {
    const { client } = orgs.a;
    await client.script.setEnvVar({ key: tenantKey, value: values.tenant });
    await client.script.importEnvVars({ vars: { IMPORTED: values.imported } });
    await client.script.createScript({
      name: "reader",
      source: `dsl: script/1\nsteps:\n  - {id: one, set: {values: {x: 1}}}\noutput: {tenant: "\${env.${tenantKey}}", overlay: "\${env.OVERLAY}"}\n`,
    });
    await client.script.updateScriptEnv({ name: "reader", set: { OVERLAY: values.overlay } });
    await client.secrets.createSecret({
      name: "moved",
      value: { value: { case: "gitSecret", value: { username: "deployer", token: values.secret } } },
    });

    expect((await client.script.getEnvVar({ key: tenantKey })).value).toBe(values.tenant);
    expect((await client.script.listEnvVars({})).vars).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: "IMPORTED", value: values.imported })]),
    );
    expect((await client.script.getScriptEnv({ name: "reader" })).vars).toEqual([
      expect.objectContaining({ key: "OVERLAY", value: values.overlay }),
    ]);

    if (server.databaseUrl) return; // PostgreSQL's files belong to its server; the rows are read below
    // The key is stored in clear: finding it shows that the write has reached the files searched.
    expect(await filesContaining(server.dataDir, tenantKey)).not.toEqual([]);
    for (const value of [values.tenant, values.imported, values.overlay, values.secret])
      expect(await filesContaining(server.dataDir, value), value).toEqual([]);
  });

  it("holds no value in clear in its rows, seals a plaintext row from before at start-up, and does not open a secret moved to another organization", async () => {
    server = await server.restart(async () => {
      const database = await openServerDatabase(server);
      try {
        const rows = await database.query<{ row: string; sealed: boolean; plaintext: boolean }>(
          `select t::text as row, t.sealed_value is not null as sealed, t.value is not null as plaintext from env_vars t where org_id = $1
           union all select t::text, t.sealed_value is not null, t.value is not null from script_env_vars t where org_id = $1
           union all select t::text, true, false from secrets t where org_id = $1`,
          [orgs.a.id],
        );
        expect(rows).toHaveLength(4);
        for (const { row, sealed, plaintext } of rows) {
          expect([sealed, plaintext], row).toEqual([true, false]);
          for (const value of Object.values(values)) expect(row).not.toContain(value);
        }
        // A value stored before values were sealed, and a secret moved to organization b.
        await database.query("insert into env_vars (org_id, key, value) values ($1, 'LEGACY', $2)", [
          orgs.a.id,
          values.legacy,
        ]);
        await database.query("update secrets set org_id = $1 where org_id = $2 and name = 'moved'", [
          orgs.b.id,
          orgs.a.id,
        ]);
      } finally {
        await database.close();
      }
    });
    orgs = clientsFor(keys);

    expect((await orgs.a.client.script.getEnvVar({ key: "LEGACY" })).value).toBe(values.legacy);
    expect((await orgs.a.client.script.getEnvVar({ key: tenantKey })).value).toBe(values.tenant);
    expect(server.logs.some((line) => line.includes("environment values sealed"))).toBe(true);
    if (!server.databaseUrl)
      expect(await filesContaining(server.dataDir, values.legacy, { withWal: false })).toEqual([]);

    const moved = await failure(() => orgs.b.client.secrets.getSecret({ name: "moved" }));
    expect(moved.code).toBe(Code.Internal);
    expect(moved.rawMessage).toMatch(/^internal error \(request id [\w-]+\)$/);
    expect(server.logs.some((line) => line.includes('"level":"error"') && line.includes('\\"moved\\"'))).toBe(true);
    expect((await failure(() => orgs.a.client.secrets.getSecret({ name: "moved" }))).code).toBe(Code.NotFound);
  });

  it("loads the values into a thread with load_env", async () => {
    const { threadId } = await orgs.a.client.script.createThread({ scriptName: "reader", loadEnv: true });
    for await (const _event of orgs.a.client.script.watchThread({ threadId })); // the stream ends with the thread
    const result = await orgs.a.client.script.getThreadResult({ threadId, outputOnly: true });
    expect(result.status).toBe(ThreadStatus.COMPLETED);
    expect(JSON.parse(new TextDecoder().decode(result.outputData))).toEqual({
      tenant: values.tenant,
      overlay: values.overlay,
    });
  });

  it("keeps the environment a thread started with sealed in its row", async () => {
    // A script that reads the environment without writing it out.
    await orgs.a.client.script.createScript({
      name: "measurer",
      source: `dsl: script/1\nsteps:\n  - {id: one, set: {values: {n: "\${size(env.${tenantKey})}"}}}\n`,
    });
    const { threadId } = await orgs.a.client.script.createThread({ scriptName: "measurer", loadEnv: true });
    for await (const _event of orgs.a.client.script.watchThread({ threadId }));
    const inspect = async () => {
      const database = await openServerDatabase(server);
      try {
        const [row] = await database.query<{ row: string; sealed: boolean }>(
          "select t::text as row, t.sealed_env is not null as sealed from threads t where id = $1",
          [threadId],
        );
        expect(row?.sealed).toBe(true);
        expect(row!.row).toContain(`{""n"": ${values.tenant.length}}`);
        for (const value of [values.tenant, values.overlay]) expect(row!.row).not.toContain(value);
      } finally {
        await database.close();
      }
    };
    if (server.databaseUrl) await inspect();
    else server = await server.restart(inspect);
  });
});
