import { createHash, randomBytes } from "node:crypto";
import { inject } from "vitest";
import { beforeAll, describe, expect, it } from "vitest";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// The registry listener's OCI distribution protocol driven by plain HTTP, as a client library would.
const registryUrl = () => inject("platformUrls").registry!;

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const sha512 = (bytes: Uint8Array) => `sha512:${createHash("sha512").update(bytes).digest("hex")}`;
const basic = (key: string) => `Basic ${Buffer.from(`anyone:${key}`).toString("base64")}`;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
  /** The first error code of an OCI error body. */
  readonly code: string | undefined;
}

async function call(
  method: string,
  path: string,
  { auth, headers = {}, body }: { auth?: string; headers?: Record<string, string>; body?: Uint8Array } = {},
): Promise<Answer> {
  const response = await fetch(path.startsWith("http") ? path : `${registryUrl()}${path}`, {
    method,
    headers: { ...headers, ...(auth ? { authorization: auth } : {}) },
    ...(body ? { body: new Uint8Array(body) } : {}),
    redirect: "manual",
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  let code: string | undefined;
  if (response.headers.get("content-type")?.includes("json") && bytes.length > 0) {
    code = (JSON.parse(bytes.toString()) as { errors?: { code: string }[] }).errors?.[0]?.code;
  }
  return { status: response.status, headers: response.headers, body: bytes, code };
}

/** A new key of the organization holding `roles`: the dk_ secret. */
async function keyWith(org: TestOrganization, roles: string[]): Promise<string> {
  const issued = await org.client.iam.createApiKey({ orgId: org.id, name: `registry-${roles.join("-")}`, roles });
  return issued.secret;
}

/** Pushes `bytes` monolithically as one blob and answers the digest. */
async function pushBlob(auth: string, repo: string, bytes: Uint8Array, digest = sha256(bytes)): Promise<string> {
  const pushed = await call("POST", `/v2/${repo}/blobs/uploads/?digest=${digest}`, {
    auth,
    headers: { "content-type": "application/octet-stream" },
    body: bytes,
  });
  expect(pushed.status, pushed.body.toString()).toBe(201);
  return digest;
}

describe("registry OCI protocol", () => {
  let org: TestOrganization;
  let other: TestOrganization;
  let auth: string;

  beforeAll(async () => {
    [org, other] = await Promise.all([createOrganization("reg"), createOrganization("regother")]);
    auth = basic(org.token);
  });

  it("answers /v2/ to a key and challenges anonymous callers", async () => {
    const ok = await call("GET", "/v2/", { auth });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    expect(JSON.parse(ok.body.toString())).toEqual({});
    expect((await call("GET", "/v2/", { auth: `Bearer ${org.token}` })).status).toBe(200);

    const anonymous = await call("GET", "/v2/");
    expect(anonymous.status).toBe(401);
    expect(anonymous.code).toBe("UNAUTHORIZED");
    const host = new URL(registryUrl()).host;
    expect(anonymous.headers.get("www-authenticate")).toBe(`Bearer realm="http://${host}/token",service="${host}"`);

    const wrong = await call("GET", "/v2/", { auth: basic("dk_not-a-key") });
    expect(wrong.status).toBe(401);
  });

  it("refuses bad names and methods with protocol errors", async () => {
    const badName = await call("GET", `/v2/${org.name}/Upper/tags/list`, { auth });
    expect([badName.status, badName.code]).toEqual([400, "NAME_INVALID"]);
    const noRepo = await call("GET", `/v2/${org.name}/tags/list`, { auth });
    expect(noRepo.code).toBe("NAME_INVALID");
    const method = await call("PATCH", `/v2/${org.name}/app/blobs/${sha256(Buffer.from("x"))}`, { auth });
    expect(method.status).toBe(405);
    expect(method.headers.get("allow")).toBe("GET, HEAD, DELETE");
    const badDigest = await call("GET", `/v2/${org.name}/app/blobs/sha256:xyz`, { auth });
    expect([badDigest.status, badDigest.code]).toEqual([400, "DIGEST_INVALID"]);
  });

  it("pushes a blob monolithically and reads it whole, by HEAD and by range", async () => {
    const repo = `${org.name}/mono`;
    const bytes = randomBytes(100_000);
    const digest = await pushBlob(auth, repo, bytes);

    const head = await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("100000");
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    expect(head.headers.get("accept-ranges")).toBe("bytes");

    const whole = await call("GET", `/v2/${repo}/blobs/${digest}`, { auth });
    expect(whole.status).toBe(200);
    expect(sha256(whole.body)).toBe(digest);

    const part = await call("GET", `/v2/${repo}/blobs/${digest}`, { auth, headers: { range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/100000");
    expect(part.body.equals(bytes.subarray(10, 20))).toBe(true);

    const missing = await call("GET", `/v2/${repo}/blobs/${sha256(Buffer.from("never"))}`, { auth });
    expect([missing.status, missing.code]).toEqual([404, "BLOB_UNKNOWN"]);

    const removed = await call("DELETE", `/v2/${repo}/blobs/${digest}`, { auth });
    expect(removed.status).toBe(202);
    expect((await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth })).status).toBe(404);
  });

  it("uploads in chunks, refuses a chunk at the wrong offset with 416 and resumes", async () => {
    const repo = `${org.name}/chunked`;
    const bytes = randomBytes(300_000);
    const started = await call("POST", `/v2/${repo}/blobs/uploads/`, { auth });
    expect(started.status).toBe(202);
    const location = started.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/v2/${repo}/blobs/uploads/[0-9a-f-]{36}$`));
    expect(started.headers.get("docker-upload-uuid")).toBe(location.split("/").pop());
    expect(started.headers.get("range")).toBe("0-0");

    const first = await call("PATCH", location, {
      auth,
      headers: { "content-range": "0-99999", "content-type": "application/octet-stream" },
      body: bytes.subarray(0, 100_000),
    });
    expect(first.status).toBe(202);
    expect(first.headers.get("range")).toBe("0-99999");

    const skipped = await call("PATCH", location, {
      auth,
      headers: { "content-range": "150000-199999", "content-type": "application/octet-stream" },
      body: bytes.subarray(150_000, 200_000),
    });
    expect(skipped.status).toBe(416);
    expect(skipped.headers.get("range")).toBe("0-99999");

    const status = await call("GET", location, { auth });
    expect(status.status).toBe(204);
    expect(status.headers.get("range")).toBe("0-99999");

    const second = await call("PATCH", location, {
      auth,
      headers: { "content-range": "100000-199999", "content-type": "application/octet-stream" },
      body: bytes.subarray(100_000, 200_000),
    });
    expect(second.status).toBe(202);

    const wrongDigest = await call("PUT", `${location}?digest=${sha256(Buffer.from("other"))}`, {
      auth,
      headers: { "content-type": "application/octet-stream" },
      body: bytes.subarray(200_000),
    });
    expect([wrongDigest.status, wrongDigest.code]).toEqual([400, "DIGEST_INVALID"]);

    const again = await call("GET", location, { auth });
    expect(again.headers.get("range")).toBe("0-299999");
    const done = await call("PUT", `${location}?digest=${sha256(bytes)}`, { auth });
    expect(done.status).toBe(201);
    expect(done.headers.get("docker-content-digest")).toBe(sha256(bytes));
    const read = await call("GET", `/v2/${repo}/blobs/${sha256(bytes)}`, { auth });
    expect(read.body.equals(bytes)).toBe(true);
    expect((await call("GET", location, { auth })).code).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("verifies sha512 digests and refuses a body that does not match", async () => {
    const repo = `${org.name}/sha512`;
    const bytes = randomBytes(5000);
    const digest = await pushBlob(auth, repo, bytes, sha512(bytes));
    const read = await call("GET", `/v2/${repo}/blobs/${digest}`, { auth });
    expect(read.headers.get("docker-content-digest")).toBe(digest);
    expect(read.body.equals(bytes)).toBe(true);

    const wrong = await call("POST", `/v2/${repo}/blobs/uploads/?digest=${sha512(Buffer.from("else"))}`, {
      auth,
      headers: { "content-type": "application/octet-stream" },
      body: bytes,
    });
    expect([wrong.status, wrong.code]).toEqual([400, "DIGEST_INVALID"]);
    const malformed = await call("POST", `/v2/${repo}/blobs/uploads/?digest=sha256:abc`, { auth, body: bytes });
    expect([malformed.status, malformed.code]).toEqual([400, "DIGEST_INVALID"]);
  });

  it("cancels an upload", async () => {
    const repo = `${org.name}/cancelled`;
    const location = (await call("POST", `/v2/${repo}/blobs/uploads/`, { auth })).headers.get("location")!;
    expect((await call("DELETE", location, { auth })).status).toBe(204);
    expect((await call("PATCH", location, { auth, body: Buffer.from("x") })).code).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("mounts a blob from a readable repository and otherwise starts an upload revealing nothing", async () => {
    const bytes = randomBytes(2000);
    const digest = await pushBlob(auth, `${org.name}/source`, bytes);

    const mounted = await call(
      "POST",
      `/v2/${org.name}/target/blobs/uploads/?mount=${digest}&from=${org.name}/source`,
      {
        auth,
      },
    );
    expect(mounted.status).toBe(201);
    expect(mounted.headers.get("docker-content-digest")).toBe(digest);
    expect((await call("GET", `/v2/${org.name}/target/blobs/${digest}`, { auth })).body.equals(bytes)).toBe(true);

    // Another organization names the blob and its repository: an ordinary upload, nothing mounted.
    const otherAuth = basic(other.token);
    const refused = await call(
      "POST",
      `/v2/${other.name}/stolen/blobs/uploads/?mount=${digest}&from=${org.name}/source`,
      { auth: otherAuth },
    );
    expect(refused.status).toBe(202);
    expect((await call("HEAD", `/v2/${other.name}/stolen/blobs/${digest}`, { auth: otherAuth })).status).toBe(404);
    const unknown = await call(
      "POST",
      `/v2/${other.name}/stolen/blobs/uploads/?mount=${digest}&from=${org.name}/nothing`,
      { auth: otherAuth },
    );
    expect(unknown.status).toBe(202);
  });

  it("keeps organizations apart and enforces roles", async () => {
    const repo = `${org.name}/private`;
    const digest = await pushBlob(auth, repo, randomBytes(100));
    const otherAuth = basic(other.token);
    const foreign = await call("GET", `/v2/${repo}/blobs/${digest}`, { auth: otherAuth });
    expect([foreign.status, foreign.code]).toEqual([404, "NAME_UNKNOWN"]);
    const missingOrg = await call("GET", `/v2/nosuchorg-${randomBytes(3).toString("hex")}/app/tags/list`, {
      auth: otherAuth,
    });
    expect([missingOrg.status, missingOrg.code]).toEqual([404, "NAME_UNKNOWN"]);
    const pushForeign = await call("POST", `/v2/${repo}/blobs/uploads/`, { auth: otherAuth });
    expect([pushForeign.status, pushForeign.code]).toEqual([404, "NAME_UNKNOWN"]);

    const reader = basic(await keyWith(org, ["registry.reader"]));
    expect((await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth: reader })).status).toBe(200);
    const readerPush = await call("POST", `/v2/${repo}/blobs/uploads/`, { auth: reader });
    expect([readerPush.status, readerPush.code]).toEqual([403, "DENIED"]);
    const readerDelete = await call("DELETE", `/v2/${repo}/blobs/${digest}`, { auth: reader });
    expect(readerDelete.code).toBe("DENIED");

    const developer = `Bearer ${await keyWith(org, ["registry.developer"])}`;
    expect((await call("POST", `/v2/${repo}/blobs/uploads/`, { auth: developer })).status).toBe(202);

    const anonymous = await call("GET", `/v2/${repo}/blobs/${digest}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain(`scope="repository:${repo}:pull"`);
  });

  it("issues tokens granting only what the key's roles allow", async () => {
    const repo = `${org.name}/tokens`;
    const digest = await pushBlob(auth, repo, randomBytes(100));
    const host = new URL(registryUrl()).host;
    const readerKey = await keyWith(org, ["registry.reader"]);
    const issued = await call(
      "GET",
      `/token?service=${encodeURIComponent(host)}&scope=${encodeURIComponent(`repository:${repo}:pull,push`)}`,
      { auth: basic(readerKey) },
    );
    expect(issued.status).toBe(200);
    const body = JSON.parse(issued.body.toString()) as {
      token: string;
      access_token: string;
      expires_in: number;
      issued_at: string;
    };
    expect(body.access_token).toBe(body.token);
    expect(body.expires_in).toBe(300);
    expect(body.token.split(".")).toHaveLength(3);
    const bearer = `Bearer ${body.token}`;
    expect((await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth: bearer })).status).toBe(200);
    // The token holds pull only: a push is asked to authenticate again, with the scope it needs.
    const push = await call("POST", `/v2/${repo}/blobs/uploads/`, { auth: bearer });
    expect(push.status).toBe(401);
    expect(push.headers.get("www-authenticate")).toContain(`scope="repository:${repo}:pull,push"`);
    // Another repository is not in the token.
    expect((await call("HEAD", `/v2/${org.name}/mono/blobs/${digest}`, { auth: bearer })).status).toBe(401);

    const form = new URLSearchParams({
      grant_type: "password",
      username: "x",
      password: org.token,
      service: host,
      scope: `repository:${repo}:pull,push`,
    });
    const posted = await call("POST", "/token", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: Buffer.from(form.toString()),
    });
    expect(posted.status).toBe(200);
    const owner = `Bearer ${(JSON.parse(posted.body.toString()) as { token: string }).token}`;
    expect((await call("POST", `/v2/${repo}/blobs/uploads/`, { auth: owner })).status).toBe(202);

    // Anonymous: a token with nothing in it for a private repository.
    const anonymous = await call("GET", `/token?service=${host}&scope=repository:${repo}:pull`);
    expect(anonymous.status).toBe(200);
    const anonymousToken = `Bearer ${(JSON.parse(anonymous.body.toString()) as { token: string }).token}`;
    expect((await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth: anonymousToken })).status).toBe(401);

    const tampered = `${body.token.slice(0, -2)}xx`;
    expect((await call("HEAD", `/v2/${repo}/blobs/${digest}`, { auth: `Bearer ${tampered}` })).status).toBe(401);
  });

  it("serves /health and leaves other paths to the control plane", async () => {
    const health = await call("GET", "/health");
    expect(health.status).toBe(200);
    expect((await call("GET", `/${org.name}/repositories`)).status).toBe(404);
  });
});
