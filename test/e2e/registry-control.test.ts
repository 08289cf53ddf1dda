import { beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient, type RegistryClient } from "../../gen/openapi/registry/client.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";
import { basic, errorCode, pushBlob, pushImage, registry, registryUrl } from "./registry-client.js";

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

describe("the registry control plane", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let client: RegistryClient;
  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("regctl"), createOrganization("regctl-other")]);
    client = createRegistryClient({ baseUrl: registryUrl(), token: acme.token });
  });
  const call = (path: string, init: RequestInit & { key?: string } = {}) =>
    registry(path, { key: acme.token, ...init });

  it("answers /health without a credential", async () => {
    const health = await registry("/health");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok", service: "registry" });
  });

  it("lists repositories, artifacts and tags with counts and times", async () => {
    const digest = await pushImage(acme.token, `${acme.name}/listed`, "v1");
    await call(`/v2/${acme.name}/listed/manifests/v1`); // one pull
    await call(`/v2/${acme.name}/listed/manifests/v1`, { method: "HEAD" }); // not a pull
    const repos = await client.listRepositories({ path: { org: acme.name }, query: { page: 1, page_size: 100 } });
    const listed = repos.body.items.find((r) => r.name === `${acme.name}/listed`)!;
    expect(listed).toMatchObject({ project_name: acme.name, artifact_count: 1, pull_count: 1, public: false });
    expect(Date.parse(listed.creation_time)).not.toBeNaN();
    const artifacts = await client.listArtifacts({ path: { org: acme.name, repo: "listed" }, query: {} });
    expect(artifacts.body.total_count).toBe(1);
    expect(artifacts.body.items[0]).toMatchObject({ digest, tags: ["v1"], media_type: OCI_MANIFEST });
    expect(artifacts.body.items[0]!.size).toBeGreaterThan(0);
    expect(artifacts.body.items[0]!.pull_time).not.toBe("");
    expect(artifacts.body.items[0]).not.toHaveProperty("scan_overview");
    const tags = await client.listArtifactTags({
      path: { org: acme.name, repo: "listed", reference: digest },
      query: {},
    });
    expect(tags.body.items).toEqual([expect.objectContaining({ name: "v1", immutable: false })]);
    // Pulled by that tag: the tag's pull time is set along with the manifest's.
    expect(Date.parse(tags.body.items[0]!.pull_time)).not.toBeNaN();
    const report = await client.getVulnerabilities({ path: { org: acme.name, repo: "listed", reference: "v1" } });
    // The test server has no advisory feed: the report says so rather than claiming a clean image.
    expect(["Pending", "Running", "NoFeed", "Unsupported"]).toContain(report.body.scan_status);
    expect(report.body.vulnerabilities).toEqual([]);
  });

  it("pages with 1-based page and page_size and refuses bad values naming them", async () => {
    for (const tag of ["a", "b", "c"]) await pushImage(acme.token, `${acme.name}/paged`, tag);
    const first = await call(`/${acme.name}/paged/artifacts?page=1&page_size=2`);
    const second = await call(`/${acme.name}/paged/artifacts?page=2&page_size=2`);
    const one = (await first.json()) as { items: { digest: string }[]; total_count: number };
    const two = (await second.json()) as { items: { digest: string }[]; total_count: number };
    expect([one.items.length, two.items.length, one.total_count]).toEqual([2, 1, 3]);
    expect(new Set([...one.items, ...two.items].map((i) => i.digest)).size).toBe(3);
    const bad = await call(`/${acme.name}/paged/artifacts?page_size=1000`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/page_size/);
  });

  it("deletes an artifact by tag or by encoded digest, with all its tags", async () => {
    const name = `${acme.name}/deleted`;
    const digest = await pushImage(acme.token, name, "v1");
    const manifest = await (await call(`/v2/${name}/manifests/v1`)).text();
    await call(`/v2/${name}/manifests/also`, {
      method: "PUT",
      headers: { "content-type": OCI_MANIFEST },
      body: manifest,
    });
    const byTag = await call(`/${acme.name}/deleted/artifacts/also`, { method: "DELETE" });
    expect(byTag.status).toBe(200);
    expect(await byTag.text()).toBe("");
    expect((await call(`/v2/${name}/manifests/v1`, { method: "HEAD" })).status).toBe(404);
    const second = await pushImage(acme.token, name, "v2");
    expect(
      (await call(`/${acme.name}/deleted/artifacts/${encodeURIComponent(second)}`, { method: "DELETE" })).status,
    ).toBe(200);
    expect((await call(`/v2/${name}/manifests/v2`, { method: "HEAD" })).status).toBe(404);
    expect(digest).not.toBe(second);
  });

  it("makes a repository public for anonymous pulls, and private again", async () => {
    const name = `${acme.name}/visible`;
    await pushImage(acme.token, name, "v1");
    expect((await registry(`/v2/${name}/manifests/v1`)).status).toBe(401);
    const changed = await call(`/${acme.name}/visible/visibility`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ public: true }),
    });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toBe("");
    expect((await registry(`/v2/${name}/manifests/v1`)).status).toBe(200);
    // Anonymous callers still cannot push.
    expect((await registry(`/v2/${name}/blobs/uploads/`, { method: "POST" })).status).toBe(401);
    const listed = await client.listRepositories({ path: { org: acme.name }, query: { page_size: 100 } });
    expect(listed.body.items.find((r) => r.name === name)?.public).toBe(true);
    await client.setVisibility({ path: { org: acme.name, repo: "visible" }, body: { public: false } });
    expect((await registry(`/v2/${name}/manifests/v1`)).status).toBe(401);
  });

  it("keeps immutable tags from moving or going", async () => {
    const name = `${acme.name}/immutable`;
    const first = await pushImage(acme.token, name, "v1.0", "first");
    await client.setTagImmutability({ path: { org: acme.name, repo: "immutable" }, body: { tag_patterns: ["v*"] } });
    const manifest = await (await call(`/v2/${name}/manifests/v1.0`)).text();
    const again = await call(`/v2/${name}/manifests/v1.0`, {
      method: "PUT",
      headers: { "content-type": OCI_MANIFEST },
      body: manifest,
    });
    expect(again.status).toBe(201);
    await pushImage(acme.token, name, "latest", "second");
    const other = await (await call(`/v2/${name}/manifests/latest`)).text();
    const moved = await call(`/v2/${name}/manifests/v1.0`, {
      method: "PUT",
      headers: { "content-type": OCI_MANIFEST },
      body: other,
    });
    expect(moved.status).toBe(403);
    expect(await errorCode(moved)).toBe("DENIED");
    const deleted = await call(`/v2/${name}/manifests/v1.0`, { method: "DELETE" });
    expect(deleted.status).toBe(403);
    const viaControl = await call(`/${acme.name}/immutable/artifacts/v1.0`, { method: "DELETE" });
    expect(viaControl.status).toBe(409);
    expect((await call(`/v2/${name}/manifests/v1.0`)).headers.get("docker-content-digest")).toBe(first);
    const tags = await client.listArtifactTags({
      path: { org: acme.name, repo: "immutable", reference: "v1.0" },
      query: {},
    });
    expect(tags.body.items[0]!.immutable).toBe(true);
  });

  it("mounts a layer from another organization's public repository into the mounter's quota", async () => {
    const mounter = await createOrganization("regmount");
    const mounterClient = createRegistryClient({ baseUrl: registryUrl(), token: mounter.token });
    const layer = `public layer ${Math.random()}`;
    const digest = await pushBlob(acme.token, `${acme.name}/base`, layer);
    const unserved = await pushBlob(acme.token, `${acme.name}/unlisted`, `private layer ${Math.random()}`);
    const mount = (blob: string) =>
      registry(`/v2/${mounter.name}/app/blobs/uploads/?mount=${blob}&from=${acme.name}/base`, {
        method: "POST",
        key: mounter.token,
      });
    // Private, the source is not readable: an ordinary upload, nothing revealed.
    expect((await mount(digest)).status).toBe(202);
    await call(`/${acme.name}/base/visibility`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ public: true }),
    });
    const mounted = await mount(digest);
    expect(mounted.status).toBe(201);
    expect(mounted.headers.get("docker-content-digest")).toBe(digest);
    const pulled = await registry(`/v2/${mounter.name}/app/blobs/${digest}`, { key: mounter.token });
    expect(pulled.status).toBe(200);
    expect(await pulled.text()).toBe(layer);
    expect((await mounterClient.getQuota({ path: { org: mounter.name } })).body.used_bytes).toBe(layer.length);
    // A blob of the organization that the public repository does not serve stays hidden.
    expect((await mount(unserved)).status).toBe(202);

    // A mount that would pass the mounter's quota is refused and keeps nothing.
    await mounterClient.setQuota({ path: { org: mounter.name }, body: { limit_bytes: layer.length } });
    const second = await pushBlob(acme.token, `${acme.name}/base`, `another public layer ${Math.random()}`);
    const refused = await mount(second);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("DENIED");
    expect(
      (await registry(`/v2/${mounter.name}/app/blobs/${second}`, { method: "HEAD", key: mounter.token })).status,
    ).toBe(404);
  });

  it("refuses a push past the organization's quota and keeps nothing of it", async () => {
    const quotaOrg = await createOrganization("regquota");
    const quotaClient = createRegistryClient({ baseUrl: registryUrl(), token: quotaOrg.token });
    await pushBlob(quotaOrg.token, `${quotaOrg.name}/app`, "x".repeat(1000));
    const used = (await quotaClient.getQuota({ path: { org: quotaOrg.name } })).body.used_bytes;
    expect(used).toBe(1000);
    await quotaClient.setQuota({ path: { org: quotaOrg.name }, body: { limit_bytes: 1500 } });
    const big = "z".repeat(600);
    const { createHash } = await import("node:crypto");
    const digest = `sha256:${createHash("sha256").update(big).digest("hex")}`;
    const over = await registry(`/v2/${quotaOrg.name}/app/blobs/uploads/?digest=${digest}`, {
      method: "POST",
      key: quotaOrg.token,
      body: big,
    });
    expect(over.status).toBe(403);
    expect(await errorCode(over)).toBe("DENIED");
    expect(
      (await registry(`/v2/${quotaOrg.name}/app/blobs/${digest}`, { method: "HEAD", key: quotaOrg.token })).status,
    ).toBe(404);
    expect((await quotaClient.getQuota({ path: { org: quotaOrg.name } })).body).toEqual({
      limit_bytes: 1500,
      used_bytes: 1000,
    });
    await quotaClient.setQuota({ path: { org: quotaOrg.name }, body: { limit_bytes: null } });
    expect(
      (
        await registry(`/v2/${quotaOrg.name}/app/blobs/uploads/?digest=${digest}`, {
          method: "POST",
          key: quotaOrg.token,
          body: big,
        })
      ).status,
    ).toBe(201);
  });

  it("answers 401 without a credential, 403 without the role, 404 for another organization", async () => {
    await pushImage(acme.token, `${acme.name}/guarded`, "v1");
    expect((await registry(`/${acme.name}`)).status).toBe(401);
    const foreign = await registry(`/${acme.name}/guarded/artifacts`, { key: other.token });
    expect(foreign.status).toBe(404);
    const reader = await acme.client.iam.createApiKey({
      orgId: acme.id,
      name: "registry-reader",
      roles: ["registry.reader"],
    });
    const read = await registry(`/${acme.name}/guarded/artifacts`, {
      headers: { authorization: basic(reader.secret) },
    });
    expect(read.status).toBe(200);
    const refused = await registry(`/${acme.name}/guarded/visibility`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${reader.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ public: true }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/registry\.admin/);
    // The reader may pull but not push on the OCI plane.
    expect((await registry(`/v2/${acme.name}/guarded/manifests/v1`, { key: reader.secret })).status).toBe(200);
    const push = await registry(`/v2/${acme.name}/guarded/blobs/uploads/`, { method: "POST", key: reader.secret });
    expect(push.status).toBe(403);
    expect(await errorCode(push)).toBe("DENIED");
  });
});
