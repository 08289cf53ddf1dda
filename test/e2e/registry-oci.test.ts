import { createHash, randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createOrganization, type TestOrganization } from "./shared-server.js";
import { errorCode, imageManifest, pushBlob, pushImage, registry, sha256 } from "./registry-client.js";

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

describe("the OCI distribution protocol", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("reg"), createOrganization("reg-other")]);
  });
  const repo = (name: string) => `${acme.name}/${name}`;

  it("asks anonymous callers to authenticate and answers a key at /v2/", async () => {
    const anonymous = await registry("/v2/");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer realm="http:\/\/[^"]+\/token",service="[^"]+"$/);
    expect(await errorCode(anonymous)).toBe("UNAUTHORIZED");
    const basic = await registry("/v2/", { key: acme.token });
    expect(basic.status).toBe(200);
    expect(basic.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    const bearer = await registry("/v2/", { headers: { authorization: `Bearer ${acme.token}` } });
    expect(bearer.status).toBe(200);
    const wrong = await registry("/v2/", { key: `dk_${"A".repeat(43)}` });
    expect(wrong.status).toBe(401);
  });

  it("follows the token flow: a token scoped to what the key may do", async () => {
    const name = repo("tokens");
    await pushImage(acme.token, name, "v1");
    const refused = await registry(`/v2/${name}/manifests/v1`);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get("www-authenticate")!;
    expect(challenge).toContain(`scope="repository:${name}:pull"`);
    const realm = /realm="([^"]+)"/.exec(challenge)![1]!;
    const service = /service="([^"]+)"/.exec(challenge)![1]!;
    const tokenAnswer = await fetch(`${realm}?service=${service}&scope=repository:${name}:pull,push`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${acme.token}`).toString("base64")}` },
    });
    expect(tokenAnswer.status).toBe(200);
    const { token, expires_in } = (await tokenAnswer.json()) as { token: string; expires_in: number };
    expect(expires_in).toBe(300);
    const pulled = await registry(`/v2/${name}/manifests/v1`, { headers: { authorization: `Bearer ${token}` } });
    expect(pulled.status).toBe(200);
    // The token grants this repository only, and another organization's key gets no grant on it.
    const elsewhere = await registry(`/v2/${repo("elsewhere")}/tags/list`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(elsewhere.status).toBe(401);
    const foreign = await fetch(`${realm}?service=${service}&scope=repository:${name}:pull`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${other.token}`).toString("base64")}` },
    });
    const foreignToken = ((await foreign.json()) as { token: string }).token;
    const denied = await registry(`/v2/${name}/manifests/v1`, { headers: { authorization: `Bearer ${foreignToken}` } });
    expect(denied.status).toBe(401);
    const forged = await registry(`/v2/${name}/manifests/v1`, {
      headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    });
    expect(forged.status).toBe(401);
  });

  it("hides another organization's repositories", async () => {
    const name = repo("private");
    await pushImage(acme.token, name, "v1");
    for (const path of [`/v2/${name}/manifests/v1`, `/v2/${name}/tags/list`]) {
      const response = await registry(path, { key: other.token });
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("NAME_UNKNOWN");
    }
    const push = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST", key: other.token });
    expect(push.status).toBe(404);
  });

  it("pushes a blob in one request and serves it whole, by range and by HEAD", async () => {
    const name = repo("blobs");
    const bytes = randomBytes(10_000);
    const digest = await pushBlob(acme.token, name, bytes);
    const head = await registry(`/v2/${name}/blobs/${digest}`, { method: "HEAD", key: acme.token });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("10000");
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    const whole = await registry(`/v2/${name}/blobs/${digest}`, { key: acme.token });
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    const part = await registry(`/v2/${name}/blobs/${digest}`, {
      key: acme.token,
      headers: { range: "bytes=100-199" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 100-199/10000");
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
    const missing = await registry(`/v2/${name}/blobs/${sha256("nothing")}`, { key: acme.token });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("BLOB_UNKNOWN");
  });

  it("refuses malformed and mismatched digests with DIGEST_INVALID", async () => {
    const name = repo("digests");
    for (const bad of ["sha256:xyz", "md5:abcd", "sha256:" + "A".repeat(64), "nodigest"]) {
      const response = await registry(`/v2/${name}/blobs/uploads/?digest=${encodeURIComponent(bad)}`, {
        method: "POST",
        key: acme.token,
        body: "x",
      });
      expect(response.status, bad).toBe(400);
      expect(await errorCode(response)).toBe("DIGEST_INVALID");
    }
    const mismatch = await registry(`/v2/${name}/blobs/uploads/?digest=${sha256("other")}`, {
      method: "POST",
      key: acme.token,
      body: "content",
    });
    expect(mismatch.status).toBe(400);
    expect(await errorCode(mismatch)).toBe("DIGEST_INVALID");
    const after = await registry(`/v2/${name}/blobs/${sha256("other")}`, { method: "HEAD", key: acme.token });
    expect(after.status).toBe(404);
  });

  it("accepts sha512 digests", async () => {
    const name = repo("sha512");
    const bytes = "sha512 content";
    const digest = `sha512:${createHash("sha512").update(bytes).digest("hex")}`;
    const pushed = await registry(`/v2/${name}/blobs/uploads/?digest=${digest}`, {
      method: "POST",
      key: acme.token,
      body: bytes,
    });
    expect(pushed.status).toBe(201);
    const read = await registry(`/v2/${name}/blobs/${digest}`, { key: acme.token });
    expect(await read.text()).toBe(bytes);
  });

  it("takes chunks in order, answers 416 to one out of order and stays resumable", async () => {
    const name = repo("chunked");
    const bytes = randomBytes(3000);
    const started = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST", key: acme.token });
    expect(started.status).toBe(202);
    const location = started.headers.get("location")!;
    const chunk = (start: number, end: number) =>
      registry(location, {
        method: "PATCH",
        key: acme.token,
        headers: { "content-range": `${start}-${end - 1}`, "content-type": "application/octet-stream" },
        body: bytes.subarray(start, end),
      });
    const first = await chunk(0, 1000);
    expect(first.status).toBe(202);
    expect(first.headers.get("range")).toBe("0-999");
    const skipped = await chunk(2000, 3000);
    expect(skipped.status).toBe(416);
    expect(skipped.headers.get("range")).toBe("0-999");
    const status = await registry(location, { key: acme.token });
    expect(status.status).toBe(204);
    expect(status.headers.get("range")).toBe("0-999");
    expect((await chunk(1000, 2000)).status).toBe(202);
    const digest = sha256(bytes);
    const done = await registry(`${location}?digest=${digest}`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-range": "2000-2999" },
      body: bytes.subarray(2000),
    });
    expect(done.status).toBe(201);
    expect(done.headers.get("docker-content-digest")).toBe(digest);
    const read = await registry(`/v2/${name}/blobs/${digest}`, { key: acme.token });
    expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true);
    // A finished upload is gone.
    expect((await registry(location, { key: acme.token })).status).toBe(404);
  });

  it("cancels an upload", async () => {
    const name = repo("cancelled");
    const started = await registry(`/v2/${name}/blobs/uploads/`, { method: "POST", key: acme.token });
    const location = started.headers.get("location")!;
    await registry(location, { method: "PATCH", key: acme.token, body: "partial" });
    expect((await registry(location, { method: "DELETE", key: acme.token })).status).toBe(204);
    const after = await registry(location, { key: acme.token });
    expect(after.status).toBe(404);
    expect(await errorCode(after)).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("mounts a blob from a repository of the same organization, never from another's", async () => {
    const digest = await pushBlob(acme.token, repo("mount-source"), "shared layer");
    const mounted = await registry(
      `/v2/${repo("mount-target")}/blobs/uploads/?mount=${digest}&from=${repo("mount-source")}`,
      {
        method: "POST",
        key: acme.token,
      },
    );
    expect(mounted.status).toBe(201);
    expect((await registry(`/v2/${repo("mount-target")}/blobs/${digest}`, { key: acme.token })).status).toBe(200);
    // Another organization asking to mount it gets an ordinary upload: nothing revealed.
    const foreign = await registry(
      `/v2/${other.name}/app/blobs/uploads/?mount=${digest}&from=${repo("mount-source")}`,
      {
        method: "POST",
        key: other.token,
      },
    );
    expect(foreign.status).toBe(202);
    expect((await registry(`/v2/${other.name}/app/blobs/${digest}`, { method: "HEAD", key: other.token })).status).toBe(
      404,
    );
  });

  it("stores manifests by tag and digest and serves them with their digest", async () => {
    const name = repo("manifests");
    const digest = await pushImage(acme.token, name, "v1");
    for (const reference of ["v1", digest]) {
      const got = await registry(`/v2/${name}/manifests/${reference}`, {
        key: acme.token,
        headers: { accept: OCI_MANIFEST },
      });
      expect(got.status).toBe(200);
      expect(got.headers.get("content-type")).toBe(OCI_MANIFEST);
      expect(got.headers.get("docker-content-digest")).toBe(digest);
      expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(digest);
    }
    const head = await registry(`/v2/${name}/manifests/v1`, { method: "HEAD", key: acme.token });
    expect(head.status).toBe(200);
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    const missing = await registry(`/v2/${name}/manifests/v2`, { key: acme.token });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("MANIFEST_UNKNOWN");
  });

  it("answers bad manifests with 4xx naming the fault, never 5xx", async () => {
    const name = repo("bad-manifests");
    const config = await pushBlob(acme.token, name, "{}");
    const put = (body: string, contentType = OCI_MANIFEST, reference = "bad") =>
      registry(`/v2/${name}/manifests/${reference}`, {
        method: "PUT",
        key: acme.token,
        headers: { "content-type": contentType },
        body,
      });
    const cases: [Response, number, string][] = [
      [await put("not json"), 400, "MANIFEST_INVALID"],
      [await put(imageManifest({ digest: "sha256:bad", size: 2 }, [])), 400, "DIGEST_INVALID"],
      [await put(imageManifest({ digest: config, size: -1 }, [])), 400, "MANIFEST_INVALID"],
      [
        await put(imageManifest({ digest: config, size: 2 }, []), "application/vnd.oci.image.index.v1+json"),
        400,
        "MANIFEST_INVALID",
      ],
      [await put(imageManifest({ digest: sha256("absent"), size: 6 }, [])), 404, "MANIFEST_BLOB_UNKNOWN"],
      [await put(imageManifest({ digest: config, size: 2 }, []), OCI_MANIFEST, "bad tag!"), 400, "TAG_INVALID"],
      [
        await put(imageManifest({ digest: config, size: 2 }, []), OCI_MANIFEST, sha256("not this")),
        400,
        "DIGEST_INVALID",
      ],
    ];
    for (const [response, status, code] of cases) {
      expect(response.status).toBe(status);
      expect(await errorCode(response)).toBe(code);
    }
  });

  it("stores an index whose manifests are in the repository", async () => {
    const name = repo("index");
    const amd = await pushImage(acme.token, name, "amd64");
    const manifestSize = (await (await registry(`/v2/${name}/manifests/${amd}`, { key: acme.token })).arrayBuffer())
      .byteLength;
    const index = (digest: string) =>
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.index.v1+json",
        manifests: [
          { mediaType: OCI_MANIFEST, digest, size: manifestSize, platform: { architecture: "amd64", os: "linux" } },
        ],
      });
    const put = (body: string) =>
      registry(`/v2/${name}/manifests/multi`, {
        method: "PUT",
        key: acme.token,
        headers: { "content-type": "application/vnd.oci.image.index.v1+json" },
        body,
      });
    expect((await put(index(amd))).status).toBe(201);
    const missing = await put(index(sha256("no such manifest")));
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("MANIFEST_BLOB_UNKNOWN");
  });

  it("lists tags in pages with a Link to the next, over hundreds of tags", async () => {
    const name = repo("many-tags");
    const digest = await pushImage(acme.token, name, "t000");
    const manifest = await (await registry(`/v2/${name}/manifests/${digest}`, { key: acme.token })).text();
    const tags = Array.from({ length: 260 }, (_, i) => `t${String(i).padStart(3, "0")}`);
    for (let i = 0; i < tags.length; i += 20) {
      await Promise.all(
        tags.slice(i, i + 20).map((tag) =>
          registry(`/v2/${name}/manifests/${tag}`, {
            method: "PUT",
            key: acme.token,
            headers: { "content-type": OCI_MANIFEST },
            body: manifest,
          }),
        ),
      );
    }
    const seen: string[] = [];
    let path: string | undefined = `/v2/${name}/tags/list?n=100`;
    while (path) {
      const page = await registry(path, { key: acme.token });
      const body = (await page.json()) as { name: string; tags: string[] };
      expect(body.name).toBe(name);
      seen.push(...body.tags);
      path = /^<([^>]+)>; rel="next"$/.exec(page.headers.get("link") ?? "")?.[1];
    }
    expect(seen).toEqual(tags);
    const last = (await (await registry(`/v2/${name}/tags/list?n=5&last=t254`, { key: acme.token })).json()) as {
      tags: string[];
    };
    expect(last.tags).toEqual(["t255", "t256", "t257", "t258", "t259"]);
  });

  it("answers referrers, filtered by artifact type, and an empty index for none", async () => {
    const name = repo("referrers");
    const subject = await pushImage(acme.token, name, "v1");
    const subjectSize = (await (await registry(`/v2/${name}/manifests/${subject}`, { key: acme.token })).arrayBuffer())
      .byteLength;
    const empty = await pushBlob(acme.token, name, "{}");
    const signature = JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: "application/vnd.example.signature",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: empty, size: 2 },
      layers: [{ mediaType: "application/vnd.oci.empty.v1+json", digest: empty, size: 2 }],
      subject: { mediaType: OCI_MANIFEST, digest: subject, size: subjectSize },
      annotations: { "org.example.kind": "signature" },
    });
    const pushed = await registry(`/v2/${name}/manifests/${sha256(signature)}`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": OCI_MANIFEST },
      body: signature,
    });
    expect(pushed.status).toBe(201);
    expect(pushed.headers.get("oci-subject")).toBe(subject);
    const all = await registry(`/v2/${name}/referrers/${subject}`, { key: acme.token });
    expect(all.headers.get("content-type")).toBe("application/vnd.oci.image.index.v1+json");
    const index = (await all.json()) as { manifests: { digest: string; artifactType: string; annotations: object }[] };
    expect(index.manifests).toEqual([
      expect.objectContaining({
        digest: sha256(signature),
        artifactType: "application/vnd.example.signature",
        annotations: { "org.example.kind": "signature" },
      }),
    ]);
    const filtered = await registry(`/v2/${name}/referrers/${subject}?artifactType=application/vnd.example.sbom`, {
      key: acme.token,
    });
    expect(filtered.headers.get("oci-filters-applied")).toBe("artifactType");
    expect(((await filtered.json()) as { manifests: unknown[] }).manifests).toEqual([]);
    const none = await registry(`/v2/${name}/referrers/${sha256("no referrers")}`, { key: acme.token });
    expect(none.status).toBe(200);
    expect(((await none.json()) as { manifests: unknown[] }).manifests).toEqual([]);
    expect((await registry(`/v2/${name}/referrers/sha256:bad`, { key: acme.token })).status).toBe(400);
  });

  it("deletes a tag alone, or a manifest with all its tags", async () => {
    const name = repo("deletes");
    const digest = await pushImage(acme.token, name, "v1");
    const manifest = await (await registry(`/v2/${name}/manifests/v1`, { key: acme.token })).text();
    await registry(`/v2/${name}/manifests/v2`, {
      method: "PUT",
      key: acme.token,
      headers: { "content-type": OCI_MANIFEST },
      body: manifest,
    });
    expect((await registry(`/v2/${name}/manifests/v2`, { method: "DELETE", key: acme.token })).status).toBe(202);
    expect((await registry(`/v2/${name}/manifests/v1`, { method: "HEAD", key: acme.token })).status).toBe(200);
    expect((await registry(`/v2/${name}/manifests/${digest}`, { method: "DELETE", key: acme.token })).status).toBe(202);
    expect((await registry(`/v2/${name}/manifests/v1`, { method: "HEAD", key: acme.token })).status).toBe(404);
    const list = (await (await registry(`/v2/${name}/tags/list`, { key: acme.token })).json()) as { tags: string[] };
    expect(list.tags).toEqual([]);
  });

  it("answers 405 with Allow and NAME_INVALID for a bad name", async () => {
    const wrong = await registry(`/v2/${repo("x")}/tags/list`, { method: "POST", key: acme.token });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    const bad = await registry(`/v2/${acme.name}/UPPER/tags/list`, { key: acme.token });
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("NAME_INVALID");
  });
});
