import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basic, errorCode, imageManifest, pushBlob, pushImage, registry, sha256 } from "./registry-client.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
const DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";

describe("registry manifests", () => {
  let acme: TestOrganization;
  beforeAll(async () => {
    acme = await createOrganization("regman");
  });
  const repo = (name: string) => `${acme.name}/${name}`;

  it("answers HEAD with the digest and length, and the stored type whatever the Accept", async () => {
    const name = repo("head");
    const digest = await pushImage(acme.token, name, "v1");
    const head = await registry(`/v2/${name}/manifests/v1`, { method: "HEAD", key: acme.token });
    expect(head.status).toBe(200);
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    expect(head.headers.get("content-type")).toBe(OCI_MANIFEST);
    const get = await registry(`/v2/${name}/manifests/${digest}`, {
      key: acme.token,
      headers: { accept: DOCKER_MANIFEST },
    });
    const bytes = new Uint8Array(await get.arrayBuffer());
    expect(get.headers.get("content-type")).toBe(OCI_MANIFEST);
    expect(Number(head.headers.get("content-length"))).toBe(bytes.length);
    expect(sha256(bytes)).toBe(digest);
  });

  it("stores Docker v2 manifests and manifest lists with their own media types", async () => {
    const name = repo("docker");
    const config = '{"os":"linux"}';
    const layer = "docker layer";
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: DOCKER_MANIFEST,
      config: {
        mediaType: "application/vnd.docker.container.image.v1+json",
        digest: await pushBlob(acme.token, name, config),
        size: config.length,
      },
      layers: [
        {
          mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
          digest: await pushBlob(acme.token, name, layer),
          size: layer.length,
        },
      ],
    });
    const put = await registry(`/v2/${name}/manifests/amd64`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": DOCKER_MANIFEST },
      body: manifest,
    });
    expect(put.status).toBe(201);
    const list = JSON.stringify({
      schemaVersion: 2,
      mediaType: DOCKER_LIST,
      manifests: [
        {
          mediaType: DOCKER_MANIFEST,
          digest: sha256(manifest),
          size: manifest.length,
          platform: { architecture: "amd64", os: "linux" },
        },
      ],
    });
    const putList = await registry(`/v2/${name}/manifests/latest`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": DOCKER_LIST },
      body: list,
    });
    expect(putList.status).toBe(201);
    const pulled = await registry(`/v2/${name}/manifests/latest`, { key: acme.token });
    expect(pulled.headers.get("content-type")).toBe(DOCKER_LIST);
    expect(await pulled.text()).toBe(list);
  });

  it("refuses a Content-Type that disagrees with the body, and a descriptor with a bad digest", async () => {
    const name = repo("bad");
    const body = imageManifest({ digest: sha256("c"), size: 1 }, []);
    const mismatch = await registry(`/v2/${name}/manifests/v1`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": DOCKER_MANIFEST },
      body,
    });
    expect(mismatch.status).toBe(400);
    expect(await errorCode(mismatch)).toBe("MANIFEST_INVALID");
    const badDigest = await registry(`/v2/${name}/manifests/v1`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": OCI_MANIFEST },
      body: imageManifest({ digest: "sha256:nothex", size: 1 }, []),
    });
    expect(badDigest.status).toBe(400);
    expect(await errorCode(badDigest)).toBe("DIGEST_INVALID");
  });
});

describe("registry garbage collection", () => {
  let server: StartedServer;
  let key: string;
  let org: string;
  beforeAll(async () => {
    server = await startPlatformServer(["--registry-gc-grace-ms", "2000", "--registry-gc-interval-ms", "300"]);
    const created = await runAdmin(server.dataDir, ["create-org", "gcorg"]);
    ({ apiKey: key } = created.json as { apiKey: string });
    org = "gcorg";
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const call = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", basic(key));
    return fetch(`${server.urls.registry}${path}`, { ...init, headers, redirect: "manual" });
  };
  async function blob(name: string, bytes: string) {
    const digest = sha256(bytes);
    const pushed = await call(`/v2/${name}/blobs/uploads/?digest=${digest}`, { method: "POST", body: bytes });
    expect(pushed.status).toBe(201);
    return { digest, size: bytes.length };
  }

  it("deletes a layer once no manifest references it, and keeps a layer still in use", async () => {
    const name = `${org}/app`;
    const shared = await blob(name, "shared config");
    const onlyOld = await blob(name, "layer only the old image has");
    const kept = await blob(name, "layer the new image keeps");
    const put = (tag: string, body: string) =>
      call(`/v2/${name}/manifests/${tag}`, { method: "PUT", headers: { "content-type": OCI_MANIFEST }, body });
    const old = imageManifest(shared, [onlyOld]);
    expect((await put("old", old)).status).toBe(201);
    expect((await put("new", imageManifest(shared, [kept]))).status).toBe(201);
    expect((await call(`/v2/${name}/manifests/${sha256(old)}`, { method: "DELETE" })).status).toBe(202);

    const deadline = Date.now() + 20_000;
    let status = 200;
    while (Date.now() < deadline && status !== 404) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      status = (await call(`/v2/${name}/blobs/${onlyOld.digest}`, { method: "HEAD" })).status;
    }
    expect(status).toBe(404);
    expect((await call(`/v2/${name}/blobs/${kept.digest}`, { method: "HEAD" })).status).toBe(200);
    expect((await call(`/v2/${name}/blobs/${shared.digest}`, { method: "HEAD" })).status).toBe(200);
    expect((await call(`/v2/${name}/manifests/new`)).status).toBe(200);
  }, 60_000);
});
