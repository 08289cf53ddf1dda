import { spawn } from "node:child_process";
import * as http from "node:http";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { request } from "undici";
import { afterAll, describe, expect, it, vi } from "vitest";
import { binary, freshDatabase, runAdmin, startPlatformServer, type TestPostgresDatabase } from "./platform-server.js";

/**
 * A POST whose headers the server has read: resolves once the server answers `100 Continue`,
 * with `finish` to send the body and get the status.
 */
function startUpload(url: string, token: string, body: unknown): Promise<{ finish(): Promise<number> }> {
  return new Promise((resolve, reject) => {
    const call = http.request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", expect: "100-continue" },
    });
    const answered = new Promise<number>((resolveStatus, rejectStatus) => {
      call.once("response", (response) => {
        response.resume();
        response.once("end", () => resolveStatus(response.statusCode ?? 0));
      });
      call.once("error", rejectStatus);
    });
    call.once("error", reject);
    call.once("continue", () => resolve({ finish: () => (call.end(JSON.stringify(body)), answered) }));
    call.flushHeaders();
  });
}

// The admin commands on a data directory with no server running (they open the database
// themselves), then the binary started on it: the keys made offline work, and SIGTERM ends it
// cleanly with in-flight calls answered.
let dataDir: string;
let database: TestPostgresDatabase | undefined;
afterAll(async () => {
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("admin commands without a running server, then the server on the same data", () => {
  it("creates an organization, keys, rotates and revokes, and the server honours all of it", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "platform-admin-"));
    database = await freshDatabase();
    const env = { DATABASE_URL: database?.url ?? "" };

    const org = await runAdmin(dataDir, ["create-org", "offline-co"], env);
    expect(org.code).toBe(0);
    const { organization, apiKey: ownerKey } = org.json as {
      organization: { id: string; name: string };
      apiKey: string;
    };
    expect(organization.name).toBe("offline-co");
    expect(ownerKey).toMatch(/^dk_/);

    const key = await runAdmin(
      dataDir,
      ["create-key", "--org", "offline-co", "--role", "secrets.viewer", "--role", "script.viewer"],
      env,
    );
    expect(key.code).toBe(0);
    const { apiKey, secret } = key.json as { apiKey: { keyId: string }; secret: string };
    const rotated = await runAdmin(dataDir, ["rotate-key", "--org", "offline-co", apiKey.keyId], env);
    const newSecret = (rotated.json as { secret: string }).secret;
    const extra = await runAdmin(dataDir, ["create-key", "--org", "offline-co", "--role", "secrets.viewer"], env);
    const extraKey = extra.json as { apiKey: { keyId: string }; secret: string };
    expect((await runAdmin(dataDir, ["revoke-key", "--org", "offline-co", extraKey.apiKey.keyId], env)).code).toBe(0);
    expect((await runAdmin(dataDir, ["create-org", "Not A Slug"], env)).code).toBe(1);
    expect((await runAdmin(dataDir, ["frobnicate"], env)).code).toBe(2);

    const server = await startPlatformServer([], { dataDir, database });
    try {
      const operatorKey = await stat(join(dataDir, "operator.key"));
      expect(operatorKey.mode & 0o777).toBe(0o600);
      const status = async (token: string) => {
        const response = await request(`${server.urls.api}/v1/compute/secrets`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await response.body.dump();
        return response.statusCode;
      };
      expect(await status(ownerKey)).toBe(200);
      expect(await status(newSecret)).toBe(200);
      expect(await status(secret)).toBe(401);
      expect(await status(extraKey.secret)).toBe(401);

      // A secret's value and the keys' secrets never reach a log line.
      const created = await request(`${server.urls.api}/v1/compute/secrets`, {
        method: "POST",
        headers: { authorization: `Bearer ${ownerKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          name: "logged",
          value: { registrySecret: { username: "u", password: "pw-that-must-not-be-logged" } },
        }),
      });
      expect(created.statusCode).toBe(200);
      await created.body.dump();

      // A second server: refused on the embedded database (one process only), welcome on
      // PostgreSQL (any number of processes share one database).
      if (database) {
        const second = spawn(
          process.execPath,
          [
            binary,
            "serve",
            "--data-dir",
            await mkdtemp(join(tmpdir(), "platform-second-")),
            "--api-port",
            "0",
            // The data listener binds too: any free port, as the first server's.
            "--data-port",
            "0",
          ],
          {
            env: { ...process.env, DATABASE_URL: database.url },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        const ready = await new Promise<string>((resolve) =>
          createInterface({ input: second.stdout }).once("line", resolve),
        );
        expect(JSON.parse(ready)).toMatchObject({ ready: true });
        second.kill("SIGTERM");
        expect(await new Promise((resolve) => second.once("exit", resolve))).toBe(0);
      } else {
        const same = spawn(process.execPath, [binary, "serve", "--data-dir", dataDir, "--api-port", "0"], {
          env: { ...process.env, DATABASE_URL: "" },
        });
        let stderr = "";
        same.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        expect(await new Promise((resolve) => same.once("exit", resolve))).toBe(1);
        expect(stderr).toContain("is in use by process");
      }

      // While the server runs, admin commands go through its API and still work.
      const live = await runAdmin(dataDir, ["create-key", "--org", "offline-co", "--role", "secrets.admin"]);
      expect(live.code).toBe(0);
      expect(await status((live.json as { secret: string }).secret)).toBe(200);

      // SIGTERM: calls in flight are answered, then the process exits 0 and forgets server.json.
      // Each call is in flight for sure: the server has read its headers and answered
      // `100 Continue`, and waits for the body, which is sent after the signal.
      const inFlight = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          startUpload(`${server.urls.api}/v1/compute/secrets`, ownerKey, {
            name: `in-flight-${i}`,
            value: { gitSecret: { username: "u", token: "t" } },
          }),
        ),
      );
      const exited = new Promise((resolve) => server.process.once("exit", resolve));
      const code = server.process.kill("SIGTERM");
      expect(code).toBe(true);
      // The bodies go once the server has begun to stop, so the calls are in flight across it.
      await vi.waitFor(() => expect(server.logs.some((line) => line.includes('"msg":"stopping"'))).toBe(true), {
        timeout: 10_000,
      });
      expect(await Promise.all(inFlight.map((upload) => upload.finish()))).toEqual([200, 200, 200, 200, 200]);
      await exited;
      expect(server.process.exitCode).toBe(0);
      await expect(stat(join(dataDir, "server.json"))).rejects.toThrow();
      expect(server.logs.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
      const logs = server.logs.join("\n");
      for (const sensitive of ["pw-that-must-not-be-logged", ownerKey, newSecret, secret])
        expect(logs).not.toContain(sensitive);
      // The seven calls made before SIGTERM and the five in flight were logged.
      expect(server.logs.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(12);
    } finally {
      if (server.process.exitCode === null) server.process.kill("SIGKILL");
    }
  }, 180_000); // several admin commands and two server starts, each opening the database
});
