import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Code,
  createClient,
  createRouterTransport,
  type Client,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretService } from "../../../gen/platform/compute/v1/secret_service_pb.js";
import { registerSecretService, SecretServiceAccess } from "../../../gen/platform/compute/v1/secret_service_server.js";
import { SecretServiceRoutes } from "../../../gen/platform/compute/v1/secret_service_http.js";
import { IamService } from "../../../gen/platform/iam/v1/iam_service_pb.js";
import { IamServiceAccess } from "../../../gen/platform/iam/v1/iam_service_server.js";
import { IamServiceRoutes } from "../../../gen/platform/iam/v1/iam_service_http.js";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import {
  registerScriptService,
  ScriptServiceAccess,
  type ScriptServiceImplementation,
} from "../../../gen/platform/script/v1/script_service_server.js";
import { ScriptServiceRoutes } from "../../../gen/platform/script/v1/script_service_http.js";
import { openTestDatabase, type TestDatabase } from "../../test/test-database.js";
import { apiKeys } from "./auth-schema.js";
import { createIamService } from "../services/iam/iam-handlers.js";
import { createIamStore, type IamStore } from "../services/iam/iam-store.js";
import { createAuthInterceptor, lastUsedResolutionMs } from "./auth-interceptor.js";
import { principalOf } from "./principal.js";
import { failure } from "../../test/connect-failure.js";

let database: TestDatabase;
let store: IamStore;
let transport: Transport;
let script: Client<typeof ScriptService>;
let secrets: Client<typeof SecretService>;
let iam: Client<typeof IamService>;

/** Handlers that answer with what the interceptor told them about the caller. */
const scriptImplementation: Partial<ScriptServiceImplementation> = {
  healthCheck: () => ({ status: "ok" }),
  listEnvVars: (_request, context: HandlerContext) => {
    const principal = principalOf(context);
    return {
      vars: [
        {
          key: principal.orgName,
          value: `${principal.orgId} ${principal.keyId} ${[...principal.roles].sort().join(",")}`,
        },
      ],
    };
  },
  setEnvVar: () => ({}),
};
const secretImplementation = {
  listSecrets: () => ({ secrets: [] }),
  getSecret: (request: { name: string }) => ({ name: request.name }),
};

const bindings = [
  { service: ScriptService, routes: ScriptServiceRoutes.routes, access: ScriptServiceAccess },
  { service: SecretService, routes: SecretServiceRoutes.routes, access: SecretServiceAccess },
  { service: IamService, routes: IamServiceRoutes.routes, access: IamServiceAccess },
];

beforeAll(async () => {
  database = await openTestDatabase();
  store = createIamStore(database.db);
  transport = createRouterTransport(
    (router) => {
      router.service(ScriptService, scriptImplementation);
      router.service(SecretService, secretImplementation);
      router.service(IamService, createIamService({ db: database.db }));
    },
    // The bindings as a function, the way server.ts hands over a router's bindings.
    { router: { interceptors: [createAuthInterceptor({ db: database.db, bindings: () => bindings })] } },
  );
  script = createClient(ScriptService, transport);
  secrets = createClient(SecretService, transport);
  iam = createClient(IamService, transport);
});
afterAll(() => database.close());

/** A new organization and a key of it holding `roles`. */
async function keyWith(roles: string[], expiresAt = 0) {
  const name = `auth-${Math.random().toString(36).slice(2, 10)}`;
  const orgId = await database.createOrganization(name);
  const { key, secret } = await store.createApiKey(orgId, { name: "test", roles, expiresAt });
  return {
    orgId,
    name,
    keyId: key.id,
    secret,
    headers: { authorization: `Bearer ${secret}`, "x-organization-name": name },
  };
}

describe(`auth interceptor (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("lets public methods through without credentials, even with bad ones", async () => {
    expect((await script.healthCheck({})).status).toBe("ok");
    expect((await script.healthCheck({}, { headers: { authorization: "Bearer nonsense" } })).status).toBe("ok");
  });

  it("hands the principal to the handler", async () => {
    const key = await keyWith(["script.viewer", "git.viewer"]);
    const { vars } = await script.listEnvVars({}, { headers: key.headers });
    expect(vars).toEqual([
      {
        $typeName: "platform.script.v1.EnvVarEntry",
        key: key.name,
        value: `${key.orgId} ${key.keyId} git.viewer,script.viewer`,
      },
    ]);
  });

  describe("UNAUTHENTICATED", () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ["missing header", {}, /^missing credentials/],
      ["empty header", { authorization: "" }, /^missing credentials/],
      ["scheme only", { authorization: "Bearer" }, /^malformed Authorization header/],
      ["basic scheme", { authorization: "Basic dXNlcjpwYXNz" }, /^unsupported authorization scheme "Basic"/],
      ["not an API key", { authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.secret-part" }, /^malformed bearer token/],
      ["unknown key", { authorization: `Bearer dk_${"Z".repeat(43)}` }, /^unknown API key/],
    ];
    for (const [name, headers, message] of cases) {
      it(name, async () => {
        const error = await failure(secrets.listSecrets({}, { headers }));
        expect(error.code).toBe(Code.Unauthenticated);
        expect(error.rawMessage).toMatch(message);
        expect(error.rawMessage).not.toContain("secret-part");
        expect(error.rawMessage).not.toContain("ZZZZZZZZ");
      });
    }

    it("revoked key, from the next call on", async () => {
      const key = await keyWith(["secrets.viewer"]);
      await secrets.listSecrets({}, { headers: key.headers });
      await store.revokeApiKey(key.orgId, key.keyId);
      const error = await failure(secrets.listSecrets({}, { headers: key.headers }));
      expect(error.code).toBe(Code.Unauthenticated);
      expect(error.rawMessage).toMatch(/was revoked$/);
      expect(error.rawMessage).not.toContain(key.secret);
    });

    it("old secret of a rotated key; the new one works", async () => {
      const key = await keyWith(["secrets.viewer"]);
      const { secret } = await store.rotateApiKey(key.orgId, key.keyId);
      const error = await failure(secrets.listSecrets({}, { headers: key.headers }));
      expect(error.code).toBe(Code.Unauthenticated);
      expect(error.rawMessage).toMatch(/^unknown API key/);
      await secrets.listSecrets({}, { headers: { authorization: `Bearer ${secret}` } });
    });

    it("expired key", async () => {
      const key = await keyWith(["secrets.viewer"], Date.now() + 60_000);
      await secrets.listSecrets({}, { headers: key.headers });
      await database.db
        .update(apiKeys)
        .set({ expiresAt: Date.now() - 1 })
        .where(eq(apiKeys.id, key.keyId));
      const error = await failure(secrets.listSecrets({}, { headers: key.headers }));
      expect(error.code).toBe(Code.Unauthenticated);
      expect(error.rawMessage).toMatch(/expired at \d{4}-/);
    });
  });

  it("accepts the scheme in any case", async () => {
    const key = await keyWith(["secrets.viewer"]);
    for (const scheme of ["bearer", "BEARER", "BeArEr"])
      await secrets.listSecrets({}, { headers: { authorization: `${scheme} ${key.secret}` } });
  });

  describe("x-organization-name", () => {
    it("is required where the contract asks for it, and must name the key's organization", async () => {
      const key = await keyWith(["script.viewer"]);
      const missing = await failure(script.listEnvVars({}, { headers: { authorization: key.headers.authorization } }));
      expect(missing.code).toBe(Code.PermissionDenied);
      expect(missing.rawMessage).toMatch(/requires the header x-organization-name/);
      const other = await keyWith([]);
      const mismatch = await failure(
        script.listEnvVars({}, { headers: { ...key.headers, "x-organization-name": other.name } }),
      );
      expect(mismatch.code).toBe(Code.PermissionDenied);
      expect(mismatch.rawMessage).toMatch(/is not the organization of this API key/);
      await script.listEnvVars({}, { headers: key.headers });
    });

    it("is ignored where the contract does not ask for it", async () => {
      const key = await keyWith(["secrets.viewer"]);
      await secrets.listSecrets({}, { headers: { authorization: key.headers.authorization } });
      await secrets.listSecrets({}, { headers: { ...key.headers, "x-organization-name": "someone-else" } });
    });
  });

  describe("PERMISSION_DENIED for a missing role", () => {
    it("names the roles that would do", async () => {
      const key = await keyWith(["script.viewer"]);
      const error = await failure(script.setEnvVar({ key: "A", value: "1" }, { headers: key.headers }));
      expect(error.code).toBe(Code.PermissionDenied);
      expect(error.rawMessage).toBe(
        "platform.script.v1.ScriptService/SetEnvVar needs one of the roles script.editor, owner; this API key has script.viewer",
      );
    });

    it("secrets.viewer lists but cannot read a secret's value", async () => {
      const key = await keyWith(["secrets.viewer"]);
      await secrets.listSecrets({}, { headers: key.headers });
      const error = await failure(secrets.getSecret({ name: "db" }, { headers: key.headers }));
      expect(error.code).toBe(Code.PermissionDenied);
      expect(error.rawMessage).toMatch(/needs one of the roles secrets.admin, owner/);
    });

    it("owner does everything in its organization; the operator nothing outside IAM", async () => {
      const owner = await keyWith(["owner"]);
      await script.setEnvVar({ key: "A", value: "1" }, { headers: owner.headers });
      await secrets.getSecret({ name: "db" }, { headers: owner.headers });
      await iam.listApiKeys({ orgId: owner.orgId }, { headers: owner.headers });
      expect((await failure(iam.createOrganization({ name: "by-owner" }, { headers: owner.headers }))).code).toBe(
        Code.PermissionDenied,
      );
      const operator = await keyWith(["operator"]);
      expect((await failure(secrets.listSecrets({}, { headers: operator.headers }))).code).toBe(Code.PermissionDenied);
    });

    it("a revoked grant takes effect on the next call", async () => {
      const key = await keyWith(["secrets.admin"]);
      await secrets.getSecret({ name: "db" }, { headers: key.headers });
      const [grant] = (
        await store.listPermissions(key.orgId, { principal: key.keyId }, { pageSize: 10, pageToken: "" })
      ).items;
      await store.revokePermission(key.orgId, grant!.id);
      expect((await failure(secrets.getSecret({ name: "db" }, { headers: key.headers }))).code).toBe(
        Code.PermissionDenied,
      );
    });

    it("a key without roles authenticates but may do nothing", async () => {
      const key = await keyWith([]);
      const error = await failure(secrets.listSecrets({}, { headers: key.headers }));
      expect(error.code).toBe(Code.PermissionDenied);
      expect(error.rawMessage).toMatch(/this API key has no roles$/);
    });
  });

  it("keeps tenants apart: a key of organization A gets NOT_FOUND for organization B", async () => {
    const a = await keyWith(["iam.admin"]);
    const b = await keyWith(["owner"]);
    for (const call of [
      () => iam.listApiKeys({ orgId: b.orgId }, { headers: a.headers }),
      () => iam.getApiKey({ orgId: b.orgId, keyId: b.keyId }, { headers: a.headers }),
      () => iam.getApiKey({ orgId: a.orgId, keyId: b.keyId }, { headers: a.headers }),
      () => iam.revokeApiKey({ orgId: b.orgId, keyId: b.keyId }, { headers: a.headers }),
      () => iam.getOrganization({ orgId: b.orgId }, { headers: a.headers }),
      () => iam.createApiKey({ orgId: b.orgId, name: "x", roles: ["owner"] }, { headers: a.headers }),
    ]) {
      expect((await failure(call())).code).toBe(Code.NotFound);
    }
    expect((await iam.listApiKeys({ orgId: a.orgId }, { headers: a.headers })).apiKeys).toHaveLength(1);
  });

  it("records last use at most once a minute", async () => {
    const key = await keyWith(["secrets.viewer"]);
    const lastUsed = async () => (await store.getApiKey(key.orgId, key.keyId))!.lastUsedAt;
    const before = Date.now();
    await secrets.listSecrets({}, { headers: key.headers });
    const first = await lastUsed();
    expect(first).toBeGreaterThanOrEqual(before);
    await secrets.listSecrets({}, { headers: key.headers });
    expect(await lastUsed()).toBe(first);
    await database.db
      .update(apiKeys)
      .set({ lastUsedAt: first - lastUsedResolutionMs })
      .where(eq(apiKeys.id, key.keyId));
    await secrets.listSecrets({}, { headers: key.headers });
    expect(await lastUsed()).toBeGreaterThanOrEqual(first);
  });

  describe("over HTTP", () => {
    let server: Server;
    let baseUrl: string;
    beforeAll(async () => {
      const router = createServiceRouter({
        interceptors: [createAuthInterceptor({ db: database.db, bindings: () => router.bindings })],
      });
      registerScriptService(router, scriptImplementation);
      registerSecretService(router, secretImplementation);
      server = createServer(router.nodeHandler());
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("answers 401 with a Bearer challenge, 403 for a missing role, 200 otherwise, on routes and Connect", async () => {
      const anonymous = await fetch(`${baseUrl}/v1/compute/secrets`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="platform"');
      expect(await anonymous.json()).toMatchObject({ code: "unauthenticated" });

      const viewer = await keyWith(["secrets.viewer"]);
      const auth = { authorization: viewer.headers.authorization };
      expect((await fetch(`${baseUrl}/v1/compute/secrets`, { headers: auth })).status).toBe(200);
      const denied = await fetch(`${baseUrl}/v1/compute/secrets/db`, { headers: auth });
      expect(denied.status).toBe(403);
      expect(await denied.json()).toMatchObject({ code: "permission_denied" });

      const connect = await fetch(`${baseUrl}/platform.compute.v1.SecretService/ListSecrets`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(connect.status).toBe(401);
      expect((await fetch(`${baseUrl}/v1/script/health`)).status).toBe(200);
    });
  });
});
