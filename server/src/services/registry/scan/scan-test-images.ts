import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { buildTar, type TarSpec } from "./build-tar.js";

/** The hand-written OSV feed the scanner's tests match against. */
export const TEST_FEED_DIR = fileURLToPath(new URL("../../../../test/fixtures/osv-feed", import.meta.url));

/** An image as a registry holds it: the manifest's bytes and every blob by digest. */
export interface TestImage {
  readonly manifest: Buffer;
  readonly blobs: ReadonlyMap<string, Buffer>;
  readonly layerDigests: readonly string[];
}

export const digestOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** Builds an OCI image manifest over `layers` (tar specs, gzipped unless given as raw bytes). */
export function buildImage(
  layers: readonly (readonly TarSpec[] | Buffer)[],
  options: { configMediaType?: string; os?: string } = {},
): TestImage {
  const blobs = new Map<string, Buffer>();
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: options.os ?? "linux", rootfs: {} }));
  blobs.set(digestOf(config), config);
  const layerDigests = layers.map((layer) => {
    const bytes = Buffer.isBuffer(layer) ? layer : gzipSync(buildTar(layer));
    blobs.set(digestOf(bytes), bytes);
    return digestOf(bytes);
  });
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: options.configMediaType ?? "application/vnd.oci.image.config.v1+json",
        digest: digestOf(config),
        size: config.length,
      },
      layers: layerDigests.map((digest) => ({
        mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
        digest,
        size: blobs.get(digest)!.length,
      })),
    }),
  );
  return { manifest, blobs, layerDigests };
}

export const DEBIAN_OS_RELEASE: readonly TarSpec[] = [
  { path: "etc/os-release", type: "symlink", linkName: "../usr/lib/os-release" },
  {
    path: "usr/lib/os-release",
    content: 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n',
  },
];

export const DEBIAN_STATUS = `Package: libssl3
Status: install ok installed
Architecture: amd64
Source: openssl
Version: 3.0.11-1~deb12u2
Description: Secure Sockets Layer toolkit
 This package is part of the OpenSSL project.

Package: zlib1g
Status: install ok installed
Source: zlib
Version: 1:1.2.13.dfsg-1

Package: curl
Status: install ok installed
Version: 7.88.1-10+deb12u8

Package: libc6
Status: install ok installed
Source: glibc
Version: 2.36-9+deb12u3

Package: libc-bin
Status: install ok installed
Source: glibc
Version: 2.36-9+deb12u3

Package: libpcre2-8-0
Status: install ok installed
Source: pcre2 (10.42-1)
Version: 10.42-1+b1

Package: libssl1.1
Status: deinstall ok config-files
Source: openssl
Version: 1.1.1n-0+deb11u5
`;

/** The Debian 12 image: os-release and the dpkg database in a first layer, an unrelated second layer. */
export function debianImage(extraLayers: readonly (readonly TarSpec[] | Buffer)[] = []): TestImage {
  return buildImage([
    [
      ...DEBIAN_OS_RELEASE,
      { path: "var/lib/dpkg/", type: "directory" },
      { path: "var/lib/dpkg/status", content: DEBIAN_STATUS },
    ],
    [{ path: "app/server.js", content: "console.log('hello')\n" }],
    ...extraLayers,
  ]);
}

export const ALPINE_INSTALLED = `C:Q1abc=
P:libcrypto3
V:3.1.4-r1
o:openssl

P:libssl3
V:3.1.4-r1
o:openssl

P:busybox
V:1.36.1-r15
o:busybox

P:musl
V:1.2.4_git20230717-r4
o:musl
`;

/**
 * The Alpine 3.19 image: a first layer with an older database, then a layer that makes
 * `lib/apk/db` opaque and writes the database the image ends with.
 */
export function alpineImage(): TestImage {
  return buildImage([
    [
      { path: "etc/os-release", content: 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.19.1\n' },
      { path: "lib/apk/db/installed", content: "P:zlib\nV:1.3-r0\no:zlib\n\nP:busybox\nV:1.36.1-r20\no:busybox\n" },
    ],
    [
      { path: "lib/apk/db/.wh..wh..opq", content: "" },
      { path: "lib/apk/db/installed", content: ALPINE_INSTALLED },
    ],
  ]);
}
