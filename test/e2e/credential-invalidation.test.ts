import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import {
  freshDatabase,
  runAdmin,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// Each server process remembers the API keys it verified. A key revoked, rotated or stripped of a
// role through one process must stop working on every other process on the same database within
// one second, whoever made the change: another server, or an admin command run elsewhere.
// (Organizations cannot be deleted or renamed, and a key cannot change organization, so those
// need no notice.) The embedded database admits one process: there A and B are one server, and
// the admin command goes through its API.
const postgresql = Boolean(process.env.TEST_DATABASE_URL);

describe(
  postgresql
    ? "credential changes across two server processes on one PostgreSQL database"
    : "credential changes on the one embedded server process",
  () => {
    let database: TestPostgresDatabase;
    let a: StartedServer;
    let b: StartedServer;
    let owner: PlatformClient;
    let orgId = "";
    const orgName = "cache-replicas";

    beforeAll(async () => {
      if (postgresql) {
        database = (await freshDatabase())!;
        const keep = { url: database.url, drop: async () => {} };
        const shared = ["--secret-key", randomBytes(32).toString("base64")];
        [a, b] = await Promise.all([
          startPlatformServer(shared, { database: keep }),
          startPlatformServer(shared, { database: keep }),
        ]);
      } else {
        a = b = await startPlatformServer();
      }
      const created = (await runAdmin(a.dataDir, ["create-org", orgName])).json as {
        organization: { id: string };
        apiKey: string;
      };
      orgId = created.organization.id;
      owner = createPlatformClient({ apiUrl: a.urls.api!, token: created.apiKey, organization: orgName });
    }, 90_000);

    afterAll(async () => {
      await Promise.all([a?.stop(), b === a ? undefined : b?.stop()]);
      await database?.drop();
    });

    /**
     * The status of `GET /v1/script/env` (ScriptService.ListEnvVars, needs script.viewer) on a
     * server, or of another path of its api listener.
     */
    async function statusOn(server: StartedServer, secret: string, path = "/v1/script/env"): Promise<number> {
      const response = await request(`${server.urls.api}${path}`, {
        headers: { authorization: `Bearer ${secret}`, "x-organization-name": orgName },
      });
      await response.body.dump();
      return response.statusCode;
    }

    /** Milliseconds until `server` answers `status` for `secret`; fails past `limitMs`. */
    async function untilStatus(
      server: StartedServer,
      secret: string,
      status: number,
      path?: string,
      limitMs = 1000,
    ): Promise<number> {
      const start = Date.now();
      for (;;) {
        const answered = await statusOn(server, secret, path);
        const took = Date.now() - start;
        if (answered === status) return took;
        if (took > limitMs) throw new Error(`still ${answered} after ${took} ms, expected ${status}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    /** A key of the organization, verified (and so remembered) by B before the change. */
    async function keyKnownToB(roles = ["script.viewer"]) {
      const issued = await owner.iam.createApiKey({ orgId, name: "cached", roles });
      for (let i = 0; i < 3; i++) expect(await statusOn(b, issued.secret)).toBe(200);
      return { keyId: issued.apiKey!.keyId, secret: issued.secret };
    }

    it("refuses on B, within one second, a key revoked through A", async () => {
      const key = await keyKnownToB();
      await owner.iam.revokeApiKey({ orgId, keyId: key.keyId });
      expect(await statusOn(a, key.secret)).toBe(401);
      const took = await untilStatus(b, key.secret, 401);
      console.info(`revocation through A refused on B after ${took} ms`);
    });

    it("refuses on B, within one second, the old secret of a key rotated through A, and takes the new one", async () => {
      const key = await keyKnownToB();
      const rotated = await owner.iam.rotateApiKey({ orgId, keyId: key.keyId });
      const took = await untilStatus(b, key.secret, 401);
      console.info(`rotation through A refused the old secret on B after ${took} ms`);
      expect(await statusOn(b, rotated.secret)).toBe(200);
    });

    it("denies on B, within one second, a call that needs a role revoked through A", async () => {
      const key = await keyKnownToB();
      const { permissions } = await owner.iam.listPermissions({ orgId, principal: key.keyId });
      expect(permissions.map((p) => p.role)).toEqual(["script.viewer"]);
      await owner.iam.revokePermission({ orgId, permissionId: permissions[0]!.permissionId });
      const took = await untilStatus(b, key.secret, 403);
      console.info(`role revoked through A denied on B after ${took} ms`);
      // And granted back: B lets it through again just as fast.
      await owner.iam.grantPermissions({ orgId, principal: key.keyId, roles: ["script.viewer"] });
      await untilStatus(b, key.secret, 200);
    });

    it("refuses on B's identity admin plane, within one second, a key revoked through A", async () => {
      // The admin plane authenticates through the same cache as the RPC routes.
      const issued = await owner.iam.createApiKey({ orgId, name: "cached-admin", roles: ["identity.viewer"] });
      for (let i = 0; i < 3; i++) expect(await statusOn(b, issued.secret, "/v1/identity/pools")).toBe(200);
      await owner.iam.revokeApiKey({ orgId, keyId: issued.apiKey!.keyId });
      expect(await statusOn(a, issued.secret, "/v1/identity/pools")).toBe(401);
      const took = await untilStatus(b, issued.secret, 401, "/v1/identity/pools");
      console.info(`revocation through A refused on B's identity admin plane after ${took} ms`);
    });

    it("refuses on both servers, within one second, a key revoked by an admin command in a third process", async () => {
      const key = await keyKnownToB();
      expect(await statusOn(a, key.secret)).toBe(200);
      // On PostgreSQL, a data directory no server runs on: the command opens the database itself.
      const adminDir = postgresql ? await mkdtemp(join(tmpdir(), "platform-admin-")) : a.dataDir;
      try {
        const revoked = await runAdmin(
          adminDir,
          ["revoke-key", "--org", orgName, key.keyId],
          postgresql ? { DATABASE_URL: database.url } : {},
        );
        expect([revoked.code, revoked.stderr]).toEqual([0, ""]);
      } finally {
        if (postgresql) await rm(adminDir, { recursive: true, force: true });
      }
      const [onA, onB] = await Promise.all([untilStatus(a, key.secret, 401), untilStatus(b, key.secret, 401)]);
      console.info(`revocation by the admin command refused on A after ${onA} ms, on B after ${onB} ms`);
    });
  },
);
