import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerIamService } from "../../../gen/platform/iam/v1/iam_service_server.js";
import { createAuthInterceptor } from "../auth/auth-interceptor.js";
import { ensureOperator } from "../auth/operator.js";
import { openDatabase, type DatabaseHandle } from "../db/database.js";
import { migrateDatabase } from "../db/migrate.js";
import { createIamService } from "../services/iam/iam-handlers.js";
import { runAdminCommand } from "./run-admin-command.js";

let dataDir: string;
let databaseUrl: string | undefined;
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "admin-test-"));
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const name = `test_${randomBytes(6).toString("hex")}`;
    const adminClient = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await adminClient.unsafe(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = async () => {
      await adminClient.unsafe(`drop database if exists ${name} with (force)`);
      await adminClient.end();
    };
  }
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await dropDatabase?.();
});

interface AdminRun {
  readonly code: number;
  readonly json: Record<string, unknown> | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

async function admin(...args: string[]): Promise<AdminRun> {
  let stdout = "";
  let stderr = "";
  const env = { DATABASE_URL: databaseUrl ?? "", PLATFORM_DATA_DIR: dataDir };
  const code = await runAdminCommand(args, env, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  const json = code === 0 && stdout.startsWith("{") ? (JSON.parse(stdout) as Record<string, unknown>) : undefined;
  return { code, json, stdout, stderr };
}

/** The output with ids, secrets and times replaced by what they are, to compare the two paths. */
function skeleton(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(skeleton);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, skeleton(v)]));
  if (typeof value !== "string") return value;
  if (value.startsWith("dk_")) return "<secret>";
  if (value === "acme-direct" || value === "acme-api") return "<org name>";
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(value)) return "<uuid>";
  if (/^[1-9][0-9]{9,}$/.test(value)) return "<time>";
  return value;
}

const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";
const results: Record<"database" | "api", Record<string, unknown>> = { database: {}, api: {} };

describe(`admin commands (${engine})`, () => {
  it("rejects bad usage with exit code 2 and the usage text", async () => {
    for (const args of [
      [],
      ["frobnicate"],
      ["create-org"],
      ["create-org", "a", "b"],
      ["create-key", "--org", "x"],
      ["create-key", "--role", "owner"],
      ["revoke-key", "--org", "x"],
      ["create-org", "x", "--bogus"],
    ]) {
      const run = await admin(...args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain("usage:");
      expect(run.stdout).toBe("");
    }
    const help = await admin("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("create-key --org NAME --role ROLE");
  });

  it("opens the database when no server runs: create-org, create-key, rotate-key, revoke-key", async () => {
    const created = await admin("create-org", "acme-direct");
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout.endsWith("}\n")).toBe(true);
    expect(created.json).toEqual({
      organization: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "acme-direct" },
      apiKey: expect.stringMatching(/^dk_/),
    });
    results.database.createOrg = created.json;

    const key = await admin(
      "create-key",
      "--org",
      "acme-direct",
      "--role",
      "script.editor",
      "--role",
      "secrets.admin",
      "--name",
      "ci",
    );
    expect(key.code).toBe(0);
    expect(key.json).toMatchObject({
      apiKey: { name: "ci", state: "API_KEY_STATE_ACTIVE", expiresAt: "0", revokedAt: "0" },
      secret: expect.stringMatching(/^dk_/),
    });
    results.database.createKey = key.json;
    const keyId = (key.json!.apiKey as { keyId: string }).keyId;

    const rotated = await admin("rotate-key", "--org", "acme-direct", keyId);
    expect(rotated.code).toBe(0);
    expect(rotated.json!.secret).not.toBe(key.json!.secret);
    results.database.rotateKey = rotated.json;

    const revoked = await admin("revoke-key", "--org", "acme-direct", keyId);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ apiKey: { keyId, state: "API_KEY_STATE_REVOKED" } });
    expect(revoked.json!.secret).toBeUndefined();
    results.database.revokeKey = revoked.json;
  });

  it("reports failures on stderr with exit code 1", async () => {
    const taken = await admin("create-org", "acme-direct");
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already_exists.*taken/);
    expect((await admin("create-org", "Bad_Name")).stderr).toMatch(/name must be 3 to 63 characters/);
    expect((await admin("create-key", "--org", "nobody-here", "--role", "owner")).stderr).toMatch(
      /organization "nobody-here" not found/,
    );
    const unknownRole = await admin("create-key", "--org", "acme-direct", "--role", "script.god");
    expect(unknownRole.code).toBe(1);
    expect(unknownRole.stderr).toMatch(/unknown role "script.god"/);
    expect(unknownRole.stdout).toBe("");
  });

  describe("while a server runs on the data directory", () => {
    let handle: DatabaseHandle;
    let server: Server;
    let baseUrl: string;
    let requests = 0;

    beforeAll(async () => {
      handle = await openDatabase({ dataDir, databaseUrl });
      await migrateDatabase(handle, () => {});
      await ensureOperator(handle.db, dataDir);
      const router = createServiceRouter({
        interceptors: [createAuthInterceptor({ db: handle.db, bindings: () => router.bindings })],
      });
      registerIamService(router, createIamService({ db: handle.db }));
      const handler = router.nodeHandler();
      server = createServer((request, response) => {
        requests++;
        handler(request, response);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await writeFile(join(dataDir, "server.json"), JSON.stringify({ pid: process.pid, api: baseUrl }));
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(join(dataDir, "server.json"), { force: true });
      await handle.close();
    });

    it("goes through the IAM API with the operator key and prints the same output", async () => {
      const created = await admin("create-org", "acme-api");
      expect(created.code).toBe(0);
      expect(requests).toBeGreaterThan(0);
      results.api.createOrg = created.json;
      const owner = created.json!.apiKey as string;
      const orgId = (created.json!.organization as { id: string }).id;

      const key = await admin(
        "create-key",
        "--org",
        "acme-api",
        "--role",
        "script.editor",
        "--role",
        "secrets.admin",
        "--name",
        "ci",
      );
      results.api.createKey = key.json;
      const keyId = (key.json!.apiKey as { keyId: string }).keyId;
      results.api.rotateKey = (await admin("rotate-key", "--org", "acme-api", keyId)).json;
      results.api.revokeKey = (await admin("revoke-key", "--org", "acme-api", keyId)).json;
      expect(skeleton(results.api)).toEqual(skeleton(results.database));

      // The owner key works against the server; the revoked key does not.
      const listed = await fetch(`${baseUrl}/v1/iam/orgs/${orgId}/api-keys`, {
        headers: { authorization: `Bearer ${owner}` },
      });
      expect(listed.status).toBe(200);
      const { apiKeys } = (await listed.json()) as { apiKeys: { keyId: string; state: string }[] };
      expect(apiKeys.map((k) => k.state).sort()).toEqual(["API_KEY_STATE_ACTIVE", "API_KEY_STATE_REVOKED"]);
      const rotatedSecret = results.api.rotateKey as { secret: string };
      expect(
        (
          await fetch(`${baseUrl}/v1/iam/orgs/${orgId}/api-keys`, {
            headers: { authorization: `Bearer ${rotatedSecret.secret}` },
          })
        ).status,
      ).toBe(401);
    });

    it("reports the server's errors the same way", async () => {
      const taken = await admin("create-org", "acme-direct");
      expect(taken.code).toBe(1);
      expect(taken.stderr).toMatch(/already_exists.*taken/);
    });
  });

  it("says so when the recorded server does not answer", async () => {
    await writeFile(join(dataDir, "server.json"), JSON.stringify({ pid: process.pid, api: "http://127.0.0.1:9" }));
    const run = await admin("create-org", "acme-unreachable");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\[unavailable\].*does not answer; remove the file if no server runs/);
    await rm(join(dataDir, "server.json"));
  });

  it("ignores a server.json whose process is gone", async () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    await writeFile(join(dataDir, "server.json"), JSON.stringify({ pid: gone, api: "http://127.0.0.1:9" }));
    const created = await admin("create-org", "acme-after");
    expect(created.code).toBe(0);
    await rm(join(dataDir, "server.json"));
  });
});
