import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A folder for one test's OCI layouts and skopeo's policy (any image accepted: the tests sign nothing). */
export async function ociWorkspace(): Promise<{ dir: string; policy: string }> {
  const dir = await mkdtemp(join(tmpdir(), "oci-e2e-"));
  const policy = join(dir, "policy.json");
  await writeFile(policy, JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }));
  return { dir, policy };
}

/**
 * Builds an image offline with umoci: an OCI layout at `layout` holding `tag`, one layer per entry
 * of `files` (path in the image → content).
 */
export async function buildImage(
  layout: string,
  tag: string,
  layers: Record<string, Uint8Array | string>[],
): Promise<void> {
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", `${layout}:${tag}`]);
  for (const files of layers) {
    const root = await mkdtemp(join(tmpdir(), "oci-layer-"));
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(root, path, ".."), { recursive: true });
      await writeFile(join(root, path), content);
    }
    await run("umoci", ["insert", "--image", `${layout}:${tag}`, root, "/"]);
  }
}

/** Random, incompressible bytes for a layer. */
export const randomContent = (bytes: number) => randomBytes(bytes);

/** Runs skopeo with the workspace's policy; rejects with skopeo's own message on failure. */
export async function skopeo(policy: string, args: string[]): Promise<string> {
  const { stdout } = await run("skopeo", ["--policy", policy, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The manifest digest a layout holds for `tag`. */
export async function layoutDigest(layout: string, tag: string): Promise<string> {
  const index = JSON.parse(await readFile(join(layout, "index.json"), "utf8")) as {
    manifests: { digest: string; annotations?: Record<string, string> }[];
  };
  const entry = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag);
  if (!entry) throw new Error(`${layout} holds no ${tag}`);
  return entry.digest;
}
