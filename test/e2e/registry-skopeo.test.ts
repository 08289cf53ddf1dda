import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// Standard clients against the registry listener: skopeo copies an image built offline by umoci
// into the registry and back, with Basic credentials, a Bearer token, and anonymously.
const run = promisify(execFile);
const registryHost = () => new URL(inject("platformUrls").registry!).host;

let work: string;
let org: TestOrganization;
let policy: string;

async function skopeo(args: string[]): Promise<string> {
  const { stdout } = await run("skopeo", ["--policy", policy, "--tmpdir", work, ...args], { timeout: 60_000 });
  return stdout;
}

/** The image manifest digest an OCI layout holds under `tag`. */
async function layoutDigest(layout: string, tag: string): Promise<string> {
  const index = JSON.parse(await readFile(join(layout, "index.json"), "utf8")) as {
    manifests: { digest: string; annotations?: Record<string, string> }[];
  };
  return index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag)!.digest;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "registry-skopeo-"));
  policy = join(work, "policy.json");
  await writeFile(policy, JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }));
  const layout = join(work, "image");
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", `${layout}:v1`]);
  await mkdir(join(work, "files"));
  await writeFile(join(work, "files", "hello.txt"), "hello from the registry\n");
  await run("umoci", ["insert", "--image", `${layout}:v1`, join(work, "files", "hello.txt"), "/hello.txt"]);
  org = await createOrganization("skopeo");
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("skopeo round trip", () => {
  it("pushes with Basic credentials and pulls the same digests back", async () => {
    const source = join(work, "image");
    const target = `docker://${registryHost()}/${org.name}/app:v1`;
    await skopeo(["copy", "--dest-tls-verify=false", "--dest-creds", `x:${org.token}`, `oci:${source}:v1`, target]);
    const inspected = JSON.parse(
      await skopeo(["inspect", "--raw", "--tls-verify=false", "--creds", `x:${org.token}`, target]),
    ) as { layers: unknown[] };
    expect(inspected.layers).toHaveLength(1);

    const back = join(work, "back-basic");
    await skopeo(["copy", "--src-tls-verify=false", "--src-creds", `x:${org.token}`, target, `oci:${back}:v1`]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
  });

  it("pushes with a registry token as Bearer", async () => {
    const host = registryHost();
    const response = await fetch(
      `http://${host}/token?service=${host}&scope=${encodeURIComponent(`repository:${org.name}/bearer:pull,push`)}`,
      { headers: { authorization: `Basic ${Buffer.from(`x:${org.token}`).toString("base64")}` } },
    );
    const { token } = (await response.json()) as { token: string };
    const source = join(work, "image");
    const target = `docker://${host}/${org.name}/bearer:v1`;
    await skopeo(["copy", "--dest-tls-verify=false", "--dest-registry-token", token, `oci:${source}:v1`, target]);
    const back = join(work, "back-bearer");
    await skopeo(["copy", "--src-tls-verify=false", "--src-registry-token", token, target, `oci:${back}:v1`]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
  });

  it.skipIf(!inject("platformDatabaseUrl"))("pulls a public repository anonymously", async () => {
    const source = join(work, "image");
    const target = `docker://${registryHost()}/${org.name}/open:v1`;
    await skopeo(["copy", "--dest-tls-verify=false", "--dest-creds", `x:${org.token}`, `oci:${source}:v1`, target]);
    const back = join(work, "back-anonymous");
    await expect(skopeo(["copy", "--src-tls-verify=false", target, `oci:${back}:v1`])).rejects.toThrow();
    // Made public the way the control plane will, in the table.
    const sql = postgres(inject("platformDatabaseUrl"), { max: 1, onnotice: () => {} });
    await sql`update registry_repositories set public = true where org_id = ${org.id} and name = 'open'`;
    await sql.end();
    await skopeo(["copy", "--src-tls-verify=false", target, `oci:${back}:v1`]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
  });
});
