import { createHash } from "node:crypto";
import { inject } from "vitest";

/** Where the shared server serves the container registry. */
export const registryUrl = (): string => inject("platformUrls").registry!;

export const sha256 = (bytes: Uint8Array | string): string =>
  `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export const basic = (key: string) => `Basic ${Buffer.from(`anyone:${key}`).toString("base64")}`;

/** A plain HTTP call to the registry listener. */
export function registry(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("authorization", basic(init.key));
  return fetch(`${registryUrl()}${path}`, { ...init, headers, redirect: "manual" });
}

/** Pushes a blob in one request (`POST ?digest=`) and answers its digest. */
export async function pushBlob(key: string, name: string, bytes: Uint8Array | string): Promise<string> {
  const digest = sha256(bytes);
  const response = await registry(`/v2/${name}/blobs/uploads/?digest=${digest}`, {
    method: "POST",
    key,
    body: bytes as BodyInit,
  });
  if (response.status !== 201) throw new Error(`blob push answered ${response.status}: ${await response.text()}`);
  return digest;
}

/** An OCI image manifest over a config and layers that were pushed with `pushBlob`. */
export function imageManifest(
  config: { digest: string; size: number },
  layers: { digest: string; size: number }[],
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
    layers: layers.map((l) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...l })),
    ...extra,
  });
}

/** Pushes a small image (one config, one layer) and answers the manifest's digest. */
export async function pushImage(key: string, name: string, reference: string, seed = reference): Promise<string> {
  const config = JSON.stringify({ architecture: "amd64", os: "linux", seed });
  const layer = `layer of ${seed}`;
  const manifest = imageManifest({ digest: await pushBlob(key, name, config), size: config.length }, [
    { digest: await pushBlob(key, name, layer), size: layer.length },
  ]);
  const response = await registry(`/v2/${name}/manifests/${reference}`, {
    method: "PUT",
    key,
    headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
    body: manifest,
  });
  if (response.status !== 201) throw new Error(`manifest push answered ${response.status}: ${await response.text()}`);
  return response.headers.get("docker-content-digest")!;
}

/** The protocol's error code of a refused answer. */
export async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { errors?: { code: string }[] };
  return body.errors?.[0]?.code;
}
