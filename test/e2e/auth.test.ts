import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// Credentials, roles and tenancy, as seen by a plain HTTP client.
let acme: TestOrganization;
let other: TestOrganization;
beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("acme"), createOrganization("other")]);
  await acme.client.script.setEnvVar({ key: "PRIVATE", value: "acme-only" });
  await acme.client.secrets.createSecret({
    name: "acme-git",
    value: { value: { case: "gitSecret", value: { username: "u", token: "t" } } },
  });
});

async function get(path: string, headers: Record<string, string>) {
  const response = await request(`${apiUrl()}${path}`, { headers });
  return { status: response.statusCode, body: (await response.body.json()) as { code?: string; message?: string } };
}

describe("credentials", () => {
  it("401 without a token, with a malformed one, and with an unknown one", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer dk_not-a-real-key" },
    ];
    for (const headers of attempts) {
      const { status, body } = await get("/v1/compute/secrets", headers);
      expect([status, body.code]).toEqual([401, "unauthenticated"]);
    }
  });

  it("403 when x-organization-name is missing or names another organization", async () => {
    expect((await get("/v1/script/env", { authorization: `Bearer ${acme.token}` })).status).toBe(403);
    const mismatch = await get("/v1/script/env", {
      authorization: `Bearer ${acme.token}`,
      "x-organization-name": other.name,
    });
    expect([mismatch.status, mismatch.body.code]).toEqual([403, "permission_denied"]);
  });

  it("403 naming the role when the key lacks it", async () => {
    const created = await acme.client.iam.createApiKey({ orgId: acme.id, name: "viewer", roles: ["secrets.viewer"] });
    const viewer = { authorization: `Bearer ${created.secret}` };
    expect((await get("/v1/compute/secrets", viewer)).status).toBe(200);
    const cleartext = await get("/v1/compute/secrets/acme-git", viewer);
    expect([cleartext.status, cleartext.body.code]).toEqual([403, "permission_denied"]);
    expect(cleartext.body.message).toMatch(/secrets\.admin/);
  });

  it("a rotated key's old secret and a revoked key stop working at once", async () => {
    const issued = await acme.client.iam.createApiKey({ orgId: acme.id, name: "rotating", roles: ["secrets.viewer"] });
    const rotated = await acme.client.iam.rotateApiKey({ orgId: acme.id, keyId: issued.apiKey!.keyId });
    expect((await get("/v1/compute/secrets", { authorization: `Bearer ${issued.secret}` })).status).toBe(401);
    expect((await get("/v1/compute/secrets", { authorization: `Bearer ${rotated.secret}` })).status).toBe(200);
    await acme.client.iam.revokeApiKey({ orgId: acme.id, keyId: issued.apiKey!.keyId });
    expect((await get("/v1/compute/secrets", { authorization: `Bearer ${rotated.secret}` })).status).toBe(401);
  });
});

describe("tenancy", () => {
  it("another organization's variable and secret are NOT_FOUND, and never listed", async () => {
    expect((await get("/v1/script/env/PRIVATE", other.headers)).status).toBe(404);
    expect((await get("/v1/compute/secrets/acme-git", other.headers)).status).toBe(404);
    expect((await get("/v1/script/env", other.headers)).body).toEqual({ vars: [] });
    expect((await get("/v1/compute/secrets", other.headers)).body).toEqual({ secrets: [] });
  });

  it("another organization's IAM is NOT_FOUND", async () => {
    expect((await get(`/v1/iam/orgs/${acme.id}/api-keys`, { authorization: `Bearer ${other.token}` })).status).toBe(
      404,
    );
    expect((await get(`/v1/iam/orgs/${acme.id}`, { authorization: `Bearer ${other.token}` })).status).toBe(404);
  });

  it("deleting another organization's secret deletes nothing", async () => {
    const deleted = await other.client.secrets.deleteSecret({ name: "acme-git" });
    expect(deleted.deleted).toBe(false);
    expect((await acme.client.secrets.getSecret({ name: "acme-git" })).name).toBe("acme-git");
  });
});
