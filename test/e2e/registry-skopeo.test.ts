import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createOrganization, type TestOrganization } from "./shared-server.js";
import { buildImage, layoutDigest, ociWorkspace, randomContent, skopeo } from "./oci-tools.js";
import { registryUrl } from "./registry-client.js";

/** Round trips through skopeo, a standard OCI client, with images built offline by umoci. */
describe("the registry with skopeo", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let workspace: { dir: string; policy: string };
  const host = () => new URL(registryUrl()).host;
  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("skopeo"), createOrganization("skopeo-other")]);
    workspace = await ociWorkspace();
    await buildImage(join(workspace.dir, "source"), "v1", [
      { "etc/os-release": "ID=debian\nVERSION_ID=12\n", "data/a.bin": randomContent(2 * 1024 * 1024) },
      { "data/b.bin": randomContent(1024 * 1024) },
    ]);
  });

  it("pushes with Basic credentials and pulls back the same digest", async () => {
    const source = join(workspace.dir, "source");
    const target = `docker://${host()}/${acme.name}/app:v1`;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `x:${acme.token}`,
      `oci:${source}:v1`,
      target,
    ]);
    const back = join(workspace.dir, "basic-back");
    await skopeo(workspace.policy, [
      "copy",
      "--src-tls-verify=false",
      "--src-creds",
      `x:${acme.token}`,
      target,
      `oci:${back}:v1`,
    ]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
    const inspected = JSON.parse(
      await skopeo(workspace.policy, ["inspect", "--tls-verify=false", "--creds", `x:${acme.token}`, target]),
    ) as { Digest: string; RepoTags: string[]; Layers: string[] };
    expect(inspected.Digest).toBe(await layoutDigest(source, "v1"));
    expect(inspected.RepoTags).toEqual(["v1"]);
    expect(inspected.Layers).toHaveLength(2);
  });

  it("pushes and pulls with the API key as a bearer token", async () => {
    const source = join(workspace.dir, "source");
    const target = `docker://${host()}/${acme.name}/bearer:v1`;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-registry-token",
      acme.token,
      `oci:${source}:v1`,
      target,
    ]);
    const back = join(workspace.dir, "bearer-back");
    await skopeo(workspace.policy, [
      "copy",
      "--src-tls-verify=false",
      "--src-registry-token",
      acme.token,
      target,
      `oci:${back}:v1`,
    ]);
    expect(await layoutDigest(back, "v1")).toBe(await layoutDigest(source, "v1"));
  });

  it("refuses anonymous pulls of a private repository and another organization's key", async () => {
    const source = join(workspace.dir, "source");
    const target = `docker://${host()}/${acme.name}/private:v1`;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `x:${acme.token}`,
      `oci:${source}:v1`,
      target,
    ]);
    await expect(skopeo(workspace.policy, ["inspect", "--tls-verify=false", "--no-creds", target])).rejects.toThrow(
      /unauthorized|authentication required/i,
    );
    await expect(
      skopeo(workspace.policy, ["inspect", "--tls-verify=false", "--creds", `x:${other.token}`, target]),
    ).rejects.toThrow(/unauthorized|not known|name unknown/i);
  });
});
