import { OciError } from "../oci/oci-error.js";
import { parseDigest } from "./digest.js";

/** A manifest body larger than this is refused (distribution's and the OCI spec's suggested limit). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";

const imageTypes = new Set([OCI_MANIFEST, DOCKER_MANIFEST]);
const indexTypes = new Set([OCI_INDEX, DOCKER_MANIFEST_LIST]);
/** Layers that live elsewhere (their `urls`): never required to be in the registry. */
const foreignLayer =
  /^application\/vnd\.(docker\.image\.rootfs\.foreign\.diff\.tar\.gzip|oci\.image\.layer\.nondistributable\.)/;

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly artifactType?: string;
  readonly annotations?: Record<string, string>;
}

export interface ParsedManifest {
  readonly mediaType: string;
  readonly kind: "image" | "index";
  /** Blobs the manifest needs in the registry: config and layers (foreign layers left out). */
  readonly blobs: readonly Descriptor[];
  /** Manifests an index lists. */
  readonly manifests: readonly Descriptor[];
  readonly subject: Descriptor | undefined;
  /** The manifest's artifactType, else its config's media type. */
  readonly artifactType: string | undefined;
  readonly annotations: Record<string, string> | undefined;
  /** The manifest plus what it references. */
  readonly totalSize: number;
}

/**
 * Parses and checks a pushed manifest. The media type is the request's Content-Type, which must
 * agree with the body's own `mediaType` when the body has one. Every fault is MANIFEST_INVALID (or
 * DIGEST_INVALID) naming the field.
 */
export function parseManifest(contentType: string | undefined, bytes: Uint8Array): ParsedManifest {
  if (bytes.length > MAX_MANIFEST_BYTES) {
    throw new OciError(
      "MANIFEST_INVALID",
      `the manifest is ${bytes.length} bytes; the limit is ${MAX_MANIFEST_BYTES}`,
      undefined,
      413,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new OciError("MANIFEST_INVALID", "the manifest is not valid JSON");
  }
  if (!isObject(body)) throw new OciError("MANIFEST_INVALID", "the manifest must be a JSON object");
  const declared = optionalString(body, "mediaType", "mediaType");
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase() || declared;
  if (!type)
    throw new OciError("MANIFEST_INVALID", "the manifest has no media type: send it as Content-Type or in mediaType");
  if (declared !== undefined && declared !== type) {
    throw new OciError(
      "MANIFEST_INVALID",
      `mediaType ${JSON.stringify(declared)} does not match the Content-Type ${JSON.stringify(type)}`,
    );
  }
  if (body.schemaVersion !== 2) throw new OciError("MANIFEST_INVALID", "schemaVersion must be 2");
  const subject = body.subject === undefined ? undefined : descriptor(body.subject, "subject");
  const artifactTypeField = optionalString(body, "artifactType", "artifactType");
  const annotations = stringMap(body.annotations, "annotations");
  if (indexTypes.has(type)) {
    const manifests = list(body.manifests, "manifests").map((d, i) => descriptor(d, `manifests[${i}]`));
    return {
      mediaType: type,
      kind: "index",
      blobs: [],
      manifests,
      subject,
      artifactType: artifactTypeField,
      annotations,
      totalSize: bytes.length + manifests.reduce((sum, d) => sum + d.size, 0),
    };
  }
  if (!imageTypes.has(type)) {
    throw new OciError("MANIFEST_INVALID", `unsupported manifest media type ${JSON.stringify(type)}`, undefined, 415);
  }
  const config = descriptor(body.config, "config");
  const layers = (body.layers === undefined && artifactTypeField ? [] : list(body.layers, "layers")).map((d, i) =>
    descriptor(d, `layers[${i}]`),
  );
  return {
    mediaType: type,
    kind: "image",
    blobs: [config, ...layers.filter((l) => !foreignLayer.test(l.mediaType))],
    manifests: [],
    subject,
    artifactType: artifactTypeField ?? config.mediaType,
    annotations,
    totalSize: bytes.length + config.size + layers.reduce((sum, d) => sum + d.size, 0),
  };
}

function descriptor(value: unknown, field: string): Descriptor {
  if (!isObject(value)) throw new OciError("MANIFEST_INVALID", `${field} must be a descriptor object`);
  const mediaType = optionalString(value, "mediaType", `${field}.mediaType`);
  if (!mediaType) throw new OciError("MANIFEST_INVALID", `${field}.mediaType is required`);
  const digestText = optionalString(value, "digest", `${field}.digest`);
  if (!digestText) throw new OciError("MANIFEST_INVALID", `${field}.digest is required`);
  parseDigest(digestText, `${field}.digest`);
  const size = value.size;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw new OciError("MANIFEST_INVALID", `${field}.size must be a non-negative integer`);
  }
  const artifactType = optionalString(value, "artifactType", `${field}.artifactType`);
  const annotations = stringMap(value.annotations, `${field}.annotations`);
  return {
    mediaType,
    digest: digestText,
    size,
    ...(artifactType && { artifactType }),
    ...(annotations && { annotations }),
  };
}

function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new OciError("MANIFEST_INVALID", `${field} must be an array`);
  return value;
}

function optionalString(body: Record<string, unknown>, key: string, field: string): string | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new OciError("MANIFEST_INVALID", `${field} must be a string`);
  return value;
}

function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value) || Object.values(value).some((v) => typeof v !== "string")) {
    throw new OciError("MANIFEST_INVALID", `${field} must be an object of strings`);
  }
  return value as Record<string, string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
