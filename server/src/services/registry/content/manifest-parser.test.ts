import { describe, expect, it } from "vitest";
import { OciError } from "../oci/oci-error.js";
import {
  DOCKER_MANIFEST,
  DOCKER_MANIFEST_LIST,
  MAX_MANIFEST_BYTES,
  OCI_INDEX,
  OCI_MANIFEST,
  parseManifest,
} from "./manifest-parser.js";

const d = (n: string) => `sha256:${n.repeat(64)}`;
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const config = { mediaType: "application/vnd.oci.image.config.v1+json", digest: d("c"), size: 10 };
const layer = { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: d("1"), size: 100 };
const image = { schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers: [layer] };

function refusal(contentType: string | undefined, body: Uint8Array): { code: string; message: string } {
  try {
    parseManifest(contentType, body);
  } catch (error) {
    if (error instanceof OciError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("the manifest was accepted");
}

describe("parseManifest", () => {
  it("extracts an image's config, layers, annotations and artifact type", () => {
    const body = bytes({ ...image, annotations: { "org.example": "x" } });
    const parsed = parseManifest(OCI_MANIFEST, body);
    expect(parsed).toMatchObject({
      kind: "image",
      mediaType: OCI_MANIFEST,
      blobs: [config, layer],
      manifests: [],
      subject: undefined,
      artifactType: config.mediaType,
      annotations: { "org.example": "x" },
      totalSize: body.length + 110,
    });
  });

  it("keeps an artifact's own artifactType and subject, with no layers required", () => {
    const subject = { mediaType: OCI_MANIFEST, digest: d("a"), size: 5 };
    const parsed = parseManifest(
      `${OCI_MANIFEST}; charset=utf-8`,
      bytes({ schemaVersion: 2, mediaType: OCI_MANIFEST, artifactType: "application/x.sig", config, subject }),
    );
    expect(parsed.artifactType).toBe("application/x.sig");
    expect(parsed.subject).toEqual(subject);
    expect(parsed.blobs).toEqual([config]);
  });

  it("reads an index's children and the Docker media types", () => {
    const child = { mediaType: OCI_MANIFEST, digest: d("b"), size: 300, platform: { os: "linux" } };
    const index = parseManifest(OCI_INDEX, bytes({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [child] }));
    expect(index).toMatchObject({ kind: "index", blobs: [], manifests: [{ digest: d("b"), size: 300 }] });
    const list = parseManifest(DOCKER_MANIFEST_LIST, bytes({ schemaVersion: 2, manifests: [child] }));
    expect(list.kind).toBe("index");
    const docker = parseManifest(
      DOCKER_MANIFEST,
      bytes({ schemaVersion: 2, mediaType: DOCKER_MANIFEST, config, layers: [] }),
    );
    expect(docker).toMatchObject({ kind: "image", blobs: [config] });
  });

  it("takes the body's mediaType when no Content-Type is sent", () => {
    expect(parseManifest(undefined, bytes(image)).mediaType).toBe(OCI_MANIFEST);
  });

  it("leaves foreign layers out of the blobs the registry must hold", () => {
    const foreign = { mediaType: "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", digest: d("f"), size: 1 };
    const parsed = parseManifest(DOCKER_MANIFEST, bytes({ schemaVersion: 2, config, layers: [layer, foreign] }));
    expect(parsed.blobs.map((b) => b.digest)).toEqual([config.digest, layer.digest]);
  });

  it("refuses bad manifests naming the field", () => {
    expect(refusal(OCI_MANIFEST, new TextEncoder().encode("{not json"))).toMatchObject({ code: "MANIFEST_INVALID" });
    expect(refusal(OCI_INDEX, bytes(image))).toMatchObject({ code: "MANIFEST_INVALID", message: /mediaType/ });
    expect(refusal(OCI_MANIFEST, bytes({ ...image, schemaVersion: 1 })).message).toMatch(/schemaVersion/);
    expect(refusal(OCI_MANIFEST, bytes({ ...image, config: undefined })).message).toMatch(/^config/);
    expect(refusal(OCI_MANIFEST, bytes({ ...image, layers: "x" })).message).toMatch(/^layers/);
    expect(refusal(OCI_MANIFEST, bytes({ ...image, layers: [{ ...layer, size: -1 }] })).message).toMatch(
      /layers\[0\]\.size/,
    );
    expect(refusal(OCI_MANIFEST, bytes({ ...image, layers: [{ ...layer, digest: "sha256:xyz" }] }))).toMatchObject({
      code: "DIGEST_INVALID",
    });
    expect(refusal(OCI_MANIFEST, bytes({ ...image, config: { ...config, mediaType: 3 } })).message).toMatch(
      /config\.mediaType/,
    );
    expect(refusal(OCI_MANIFEST, bytes({ ...image, annotations: { a: 1 } })).message).toMatch(/annotations/);
    expect(refusal(OCI_INDEX, bytes({ schemaVersion: 2, manifests: [{}] })).message).toMatch(/manifests\[0\]/);
    expect(refusal("text/plain", bytes({ schemaVersion: 2 }))).toMatchObject({ code: "MANIFEST_INVALID" });
  });

  it("refuses a body over 4 MiB", () => {
    expect(refusal(OCI_MANIFEST, new Uint8Array(MAX_MANIFEST_BYTES + 1)).message).toMatch(/limit/);
  });
});
