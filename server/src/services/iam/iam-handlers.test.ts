import { randomUUID } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { Code, createRouterTransport } from "@connectrpc/connect";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeySchema, ApiKeyState } from "../../../../gen/platform/iam/v1/iam_pb.js";
import { createIamServiceClient, type IamServiceClient } from "../../../../gen/platform/iam/v1/iam_service_client.js";
import { IamService } from "../../../../gen/platform/iam/v1/iam_service_pb.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { principalKey, type Principal } from "../../auth/principal.js";
import { apiKeys } from "../../auth/auth-schema.js";
import { createIamService } from "./iam-handlers.js";
import { failure } from "../../../test/connect-failure.js";

let database: TestDatabase;
let operator: IamServiceClient;
beforeAll(async () => {
  database = await openTestDatabase();
  operator = clientAs({ orgId: randomUUID(), orgName: "_platform", keyId: randomUUID(), roles: new Set(["operator"]) });
});
afterAll(() => database.close());

/** A client whose calls arrive as `principal`, as the auth interceptor would set it. */
function clientAs(principal: Principal): IamServiceClient {
  const transport = createRouterTransport(
    (router) => router.service(IamService, createIamService({ db: database.db })),
    {
      router: {
        interceptors: [
          (next) => (request) => {
            request.contextValues.set(principalKey, principal);
            return next(request);
          },
        ],
      },
    },
  );
  return createIamServiceClient(transport, { retry: false });
}

/** An organization and a client acting as an iam.admin key of it. */
async function organizationAdmin(): Promise<{ orgId: string; name: string; client: IamServiceClient }> {
  const name = `org-${randomUUID().slice(0, 8)}`;
  const orgId = await database.createOrganization(name);
  return {
    orgId,
    name,
    client: clientAs({ orgId, orgName: name, keyId: randomUUID(), roles: new Set(["iam.admin"]) }),
  };
}

describe(`IAM handlers (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  describe("organizations", () => {
    it("the operator creates organizations; the name is a slug", async () => {
      const created = await operator.createOrganization({ name: "handlers-acme" });
      expect(created).toMatchObject({ name: "handlers-acme", displayName: "handlers-acme" });
      expect(created.orgId).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.createdAt).toBeGreaterThan(0n);
      expect((await failure(operator.createOrganization({ name: "handlers-acme" }))).code).toBe(Code.AlreadyExists);
      for (const name of ["", "ab", "Acme", "a_b", "_platform", "x".repeat(64), "with space"]) {
        const error = await failure(operator.createOrganization({ name }));
        expect(error.code, name).toBe(Code.InvalidArgument);
        expect(error.rawMessage).toMatch(/^name must be/);
      }
      expect((await operator.createOrganization({ name: "x".repeat(63), displayName: "Long" })).displayName).toBe(
        "Long",
      );
    });

    it("an ordinary caller cannot create organizations", async () => {
      const { client } = await organizationAdmin();
      expect((await failure(client.createOrganization({ name: "handlers-denied" }))).code).toBe(Code.PermissionDenied);
    });

    it("an ordinary caller sees only its own organization; the operator sees all", async () => {
      const a = await organizationAdmin();
      const b = await organizationAdmin();
      expect((await a.client.getOrganization({ orgId: a.orgId })).name).toBe(a.name);
      expect((await failure(a.client.getOrganization({ orgId: b.orgId }))).code).toBe(Code.NotFound);
      expect((await failure(a.client.getOrganization({ orgId: "not-a-uuid" }))).code).toBe(Code.InvalidArgument);
      expect((await a.client.listOrganizations({})).organizations.map((o) => o.name)).toEqual([a.name]);
      expect((await operator.getOrganization({ orgId: b.orgId })).name).toBe(b.name);
      const names: string[] = [];
      for await (const org of operator.listOrganizationsAll({ pageSize: 1 })) names.push(org.name);
      expect(names).toEqual(expect.arrayContaining([a.name, b.name]));
      expect(names).toEqual([...names].sort());
      expect((await failure(operator.listOrganizations({ pageSize: -1 }))).rawMessage).toContain("page_size");
    });
  });

  describe("API keys", () => {
    it("issues a key once with its roles, lists metadata only", async () => {
      const { orgId, client } = await organizationAdmin();
      const issued = await client.createApiKey({
        orgId,
        name: " deploy bot ",
        roles: ["script.editor", "secrets.admin"],
      });
      expect(issued.secret).toMatch(/^dk_[A-Za-z0-9_-]{43}$/);
      expect(issued.apiKey).toMatchObject({
        orgId,
        name: "deploy bot",
        secretPrefix: issued.secret.slice(0, 10),
        state: ApiKeyState.ACTIVE,
        expiresAt: 0n,
        rotatedAt: 0n,
        revokedAt: 0n,
      });
      const grants = await client.listPermissions({ orgId, principal: issued.apiKey!.keyId });
      expect(grants.permissions.map((p) => p.role).sort()).toEqual(["script.editor", "secrets.admin"]);
      const listed = await client.listApiKeys({ orgId });
      expect(listed.apiKeys.map((k) => k.keyId)).toEqual([issued.apiKey!.keyId]);
      const json = JSON.stringify(listed.apiKeys.map((k) => toJson(ApiKeySchema, k)));
      expect(json).not.toContain(issued.secret);
      expect(await client.getApiKey({ orgId, keyId: issued.apiKey!.keyId })).toEqual(listed.apiKeys[0]);
    });

    it("validates name, roles and expiry, naming the field", async () => {
      const { orgId, client } = await organizationAdmin();
      const cases: [Parameters<IamServiceClient["createApiKey"]>[0], RegExp][] = [
        [{ orgId, name: "" }, /^name is required/],
        [{ orgId, name: "x".repeat(101) }, /^name is required, at most 100/],
        [{ orgId, name: "k", roles: ["script.writer"] }, /^roles: unknown role "script.writer"/],
        [{ orgId, name: "k", roles: ["operator"] }, /^roles: role "operator" cannot be granted/],
        [
          { orgId, name: "k", roles: ["git.viewer", "git.editor"] },
          /^roles: "git.viewer" and "git.editor" are tiers of one family/,
        ],
        [{ orgId, name: "k", roles: Array.from({ length: 21 }, (_, i) => `r${i}`) }, /^roles may name at most 20/],
        [{ orgId, name: "k", expiresAt: BigInt(Date.now() - 1000) }, /^expires_at must be a future time/],
        [{ orgId: "", name: "k" }, /^org_id is required/],
      ];
      for (const [request, message] of cases) {
        const error = await failure(client.createApiKey(request));
        expect(error.code, message.source).toBe(Code.InvalidArgument);
        expect(error.rawMessage).toMatch(message);
      }
      const expiring = await client.createApiKey({ orgId, name: "k", expiresAt: BigInt(Date.now() + 60_000) });
      expect(expiring.apiKey!.expiresAt).toBeGreaterThan(0n);
    });

    it("reports expired and revoked keys by state, and filters by state", async () => {
      const { orgId, client } = await organizationAdmin();
      const active = await client.createApiKey({ orgId, name: "active" });
      const expired = await client.createApiKey({ orgId, name: "expired", expiresAt: BigInt(Date.now() + 60_000) });
      const revoked = await client.createApiKey({ orgId, name: "revoked" });
      await database.db
        .update(apiKeys)
        .set({ expiresAt: Date.now() - 1 })
        .where(eq(apiKeys.id, expired.apiKey!.keyId));
      const afterRevoke = await client.revokeApiKey({ orgId, keyId: revoked.apiKey!.keyId });
      expect(afterRevoke).toMatchObject({ state: ApiKeyState.REVOKED });
      expect(afterRevoke.revokedAt).toBeGreaterThan(0n);
      expect(await client.revokeApiKey({ orgId, keyId: revoked.apiKey!.keyId })).toEqual(afterRevoke);
      const ids = async (state: ApiKeyState) =>
        (await client.listApiKeys({ orgId, state })).apiKeys.map((k) => k.keyId);
      expect(await ids(ApiKeyState.ACTIVE)).toEqual([active.apiKey!.keyId]);
      expect(await ids(ApiKeyState.EXPIRED)).toEqual([expired.apiKey!.keyId]);
      expect(await ids(ApiKeyState.REVOKED)).toEqual([revoked.apiKey!.keyId]);
      expect(await ids(ApiKeyState.UNSPECIFIED)).toHaveLength(3);
      expect((await client.getApiKey({ orgId, keyId: expired.apiKey!.keyId })).state).toBe(ApiKeyState.EXPIRED);
      expect((await failure(client.rotateApiKey({ orgId, keyId: revoked.apiKey!.keyId }))).code).toBe(
        Code.FailedPrecondition,
      );
      expect((await failure(client.rotateApiKey({ orgId, keyId: expired.apiKey!.keyId }))).code).toBe(
        Code.FailedPrecondition,
      );
      expect((await failure(client.listApiKeys({ orgId, state: 9 as ApiKeyState }))).code).toBe(Code.InvalidArgument);
    });

    it("rotates: a new secret and prefix, same key and grants", async () => {
      const { orgId, client } = await organizationAdmin();
      const issued = await client.createApiKey({ orgId, name: "rot", roles: ["data.editor"] });
      const rotated = await client.rotateApiKey({ orgId, keyId: issued.apiKey!.keyId });
      expect(rotated.secret).not.toBe(issued.secret);
      expect(rotated.apiKey).toMatchObject({ keyId: issued.apiKey!.keyId, secretPrefix: rotated.secret.slice(0, 10) });
      expect(rotated.apiKey!.rotatedAt).toBeGreaterThan(0n);
      expect(
        (await client.listPermissions({ orgId, principal: issued.apiKey!.keyId })).permissions.map((p) => p.role),
      ).toEqual(["data.editor"]);
    });

    it("never reaches another organization's keys: NOT_FOUND", async () => {
      const a = await organizationAdmin();
      const b = await organizationAdmin();
      const bKey = await b.client.createApiKey({ orgId: b.orgId, name: "b" });
      const keyId = bKey.apiKey!.keyId;
      for (const call of [
        () => a.client.getApiKey({ orgId: b.orgId, keyId }),
        () => a.client.getApiKey({ orgId: a.orgId, keyId }),
        () => a.client.rotateApiKey({ orgId: a.orgId, keyId }),
        () => a.client.revokeApiKey({ orgId: a.orgId, keyId }),
        () => a.client.listApiKeys({ orgId: b.orgId }),
        () => a.client.createApiKey({ orgId: b.orgId, name: "intruder" }),
        () => a.client.grantPermissions({ orgId: a.orgId, principal: keyId, roles: ["owner"] }),
        () => a.client.listPermissions({ orgId: b.orgId }),
      ]) {
        expect((await failure(call())).code).toBe(Code.NotFound);
      }
      expect((await b.client.getApiKey({ orgId: b.orgId, keyId })).state).toBe(ApiKeyState.ACTIVE);
      // The operator manages keys of any organization.
      expect((await operator.getApiKey({ orgId: b.orgId, keyId })).keyId).toBe(keyId);
    });
  });

  describe("permissions", () => {
    it("grants, returns existing grants, swaps tiers and validates resources", async () => {
      const { orgId, name, client } = await organizationAdmin();
      const { apiKey } = await client.createApiKey({ orgId, name: "dev" });
      const principal = apiKey!.keyId;
      const first = await client.grantPermissions({ orgId, principal, roles: ["script.viewer", "registry.developer"] });
      expect(first.permissions.map((p) => [p.role, p.resource, p.principal, p.orgId])).toEqual([
        ["script.viewer", "", principal, orgId],
        ["registry.developer", "", principal, orgId],
      ]);
      const again = await client.grantPermissions({ orgId, principal, roles: ["script.viewer"] });
      expect(again.permissions[0]).toEqual(first.permissions[0]);
      const swapped = await client.grantPermissions({ orgId, principal, roles: ["script.editor"] });
      const roles = (await client.listPermissions({ orgId, principal })).permissions.map((p) => p.role).sort();
      expect(roles).toEqual(["registry.developer", "script.editor"]);
      expect(swapped.permissions[0]!.role).toBe("script.editor");

      const repo = `drn:platform:git:local:${name}:repo/r1`;
      const onRepo = await client.grantPermissions({ orgId, principal, roles: ["git.editor"], resource: repo });
      expect(onRepo.permissions[0]).toMatchObject({ role: "git.editor", resource: repo });
      expect((await client.listPermissions({ orgId, resource: repo })).permissions).toHaveLength(1);
      expect((await client.listPermissions({ orgId, role: "git.editor" })).permissions).toHaveLength(1);

      const invalid: [Parameters<IamServiceClient["grantPermissions"]>[0], RegExp][] = [
        [{ orgId, principal, roles: [] }, /^roles must name at least 1 role/],
        [{ orgId, principal, roles: ["nope"] }, /^roles: unknown role "nope"/],
        [{ orgId, principal, roles: ["git.viewer"], resource: "repo/r1" }, /^resource must be a resource name/],
        [
          { orgId, principal, roles: ["git.viewer"], resource: "drn:platform:git:local:someone-else:repo/r1" },
          /^resource names organization "someone-else"/,
        ],
        [
          { orgId, principal, roles: ["script.viewer"], resource: repo },
          /^resource: role "script.viewer" cannot be limited to a git resource/,
        ],
        [{ orgId, principal: "key-1", roles: ["git.viewer"] }, /^principal must be a UUID/],
      ];
      for (const [request, message] of invalid) {
        const error = await failure(client.grantPermissions(request));
        expect(error.code, message.source).toBe(Code.InvalidArgument);
        expect(error.rawMessage).toMatch(message);
      }
      expect(
        (await failure(client.grantPermissions({ orgId, principal: randomUUID(), roles: ["git.viewer"] }))).code,
      ).toBe(Code.NotFound);
    });

    it("revoking a key deletes its grants; revoking a grant takes one away", async () => {
      const { orgId, client } = await organizationAdmin();
      const { apiKey } = await client.createApiKey({ orgId, name: "temp", roles: ["compute.editor", "builds.viewer"] });
      const principal = apiKey!.keyId;
      const grants = (await client.listPermissions({ orgId, principal })).permissions;
      await client.revokePermission({ orgId, permissionId: grants[0]!.permissionId });
      expect((await client.listPermissions({ orgId, principal })).permissions).toHaveLength(1);
      expect((await failure(client.revokePermission({ orgId, permissionId: grants[0]!.permissionId }))).code).toBe(
        Code.NotFound,
      );
      expect((await failure(client.revokePermission({ orgId, permissionId: "x" }))).code).toBe(Code.InvalidArgument);
      await client.revokeApiKey({ orgId, keyId: principal });
      expect((await client.listPermissions({ orgId, principal })).permissions).toEqual([]);
      expect((await failure(client.grantPermissions({ orgId, principal, roles: ["owner"] }))).code).toBe(Code.NotFound);
    });

    it("pages grants with tokens", async () => {
      const { orgId, client } = await organizationAdmin();
      await client.createApiKey({
        orgId,
        name: "many",
        roles: ["script.viewer", "data.viewer", "builds.viewer", "compute.viewer", "secrets.viewer"],
      });
      const pages: number[] = [];
      let pageToken = "";
      do {
        const page = await client.listPermissions({ orgId, pageSize: 2, pageToken });
        pages.push(page.permissions.length);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      expect(pages).toEqual([2, 2, 1]);
      expect((await failure(client.listPermissions({ orgId, pageToken: "bm9wZQ" }))).code).toBe(Code.InvalidArgument);
    });
  });
});
