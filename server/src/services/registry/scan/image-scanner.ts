import type { AdvisoryFeed } from "./advisory-feed.js";
import { parseApkInstalled } from "./apk-installed.js";
import { parseDpkgStatus } from "./dpkg-status.js";
import { ImageFilesystem } from "./image-filesystem.js";
import type { InstalledPackage } from "./installed-package.js";
import { layerTarStream, UnsupportedLayerError } from "./layer-stream.js";
import { distributionOf, parseOsRelease, type Distribution } from "./os-release.js";
import { parseRpmDatabase } from "./rpm-database.js";
import { readTarEntries } from "./tar-entries.js";
import { buildVulnerabilityReport, type VulnerabilityReport } from "./vulnerability-report.js";

/** What a scan concluded; `message` says why for every outcome but Success. */
export type ScanOutcome =
  | { readonly status: "Success"; readonly report: VulnerabilityReport }
  | { readonly status: "Unsupported" | "Error" | "NoFeed"; readonly message: string };

/** The bytes of one blob of the manifest's organization, or undefined when they are not stored. */
export type OpenBlobBytes = (digest: string) => Promise<AsyncIterable<Uint8Array> | undefined>;

export interface ScanOptions {
  /** Largest package database file kept in memory. */
  readonly maxDatabaseBytes: number;
}

const IMAGE_CONFIG_TYPES = new Set([
  "application/vnd.oci.image.config.v1+json",
  "application/vnd.docker.container.image.v1+json",
]);
const OS_RELEASE = ["etc/os-release", "usr/lib/os-release"];
const DPKG_STATUS = "var/lib/dpkg/status";
const DPKG_STATUS_DIR = "var/lib/dpkg/status.d";
const APK_INSTALLED = "lib/apk/db/installed";
/** rpm's SQLite database (rpm 4.16 and later), where Fedora-based images now keep it and where they kept it. */
const RPM_SQLITE = ["usr/lib/sysimage/rpm/rpmdb.sqlite", "var/lib/rpm/rpmdb.sqlite"];
const WAL_SUFFIX = "-wal";

/** The files the scanner keeps of each layer; everything else streams past. */
function wanted(path: string): boolean {
  if (OS_RELEASE.includes(path) || path === DPKG_STATUS || path === APK_INSTALLED) return true;
  if (RPM_SQLITE.some((database) => path === database || path === `${database}${WAL_SUFFIX}`)) return true;
  // Distroless keeps one file per package in status.d, beside `<name>.md5sums` lists that are not paragraphs.
  return (
    path.startsWith(`${DPKG_STATUS_DIR}/`) &&
    !path.slice(DPKG_STATUS_DIR.length + 1).includes("/") &&
    !path.endsWith(".md5sums")
  );
}

/**
 * Scans one image manifest: reads its config, applies its layers in order (streamed, each through
 * the tar reader, keeping only the files above), finds the distribution and its package database,
 * and matches the packages against the feed. Without a feed the answer is NoFeed, never a clean
 * report; an artifact that is not a container image, or an image of an unknown distribution, is
 * Unsupported.
 */
export async function scanImage(
  manifestBytes: Uint8Array,
  openBlob: OpenBlobBytes,
  feed: AdvisoryFeed | undefined,
  options: ScanOptions,
): Promise<ScanOutcome> {
  const manifest = parseManifest(manifestBytes);
  if (!manifest) return { status: "Error", message: "the manifest is not a valid image manifest" };
  if (!IMAGE_CONFIG_TYPES.has(manifest.configMediaType))
    return { status: "Unsupported", message: `artifacts of config type ${manifest.configMediaType} are not scanned` };
  if (!feed) return { status: "NoFeed", message: "no advisory feed is loaded" };

  const config = await openBlob(manifest.configDigest);
  if (!config) return { status: "Error", message: `the image config ${manifest.configDigest} is not stored` };
  const os = await readConfigOs(config);
  if (os !== "linux") return { status: "Unsupported", message: `images for ${os || "an unnamed OS"} are not scanned` };

  const filesystem = new ImageFilesystem(wanted);
  for (const digest of manifest.layerDigests) {
    const blob = await openBlob(digest);
    if (!blob) return { status: "Error", message: `the layer ${digest} is not stored` };
    try {
      await filesystem.applyLayer(
        readTarEntries(layerTarStream(blob), { want: wanted, maxEntryBytes: options.maxDatabaseBytes }),
      );
    } catch (error) {
      if (error instanceof UnsupportedLayerError)
        return { status: "Unsupported", message: `layer ${digest}: ${error.message}` };
      throw error;
    }
  }

  const osRelease = OS_RELEASE.map((path) => filesystem.read(path)).find((bytes) => bytes !== undefined);
  if (!osRelease) return { status: "Unsupported", message: "the image has no os-release: its distribution is unknown" };
  const release = parseOsRelease(osRelease.toString("utf8"));
  const distribution = distributionOf(release);
  if (!distribution)
    return {
      status: "Unsupported",
      message: `the distribution ${release.id || "(no ID)"} ${release.versionId} is not supported`,
    };
  const packages = installedPackages(filesystem, distribution.packageFormat);
  if (!packages)
    return {
      status: "Unsupported",
      message:
        distribution.packageFormat === "rpm"
          ? "the image has no rpm database in SQLite format (rpm 4.16 and later): Berkeley DB and NDB databases are not read"
          : `the image has no ${distribution.packageFormat} package database`,
    };
  return { status: "Success", report: buildVulnerabilityReport(packages, distribution, feed) };
}

function installedPackages(
  filesystem: ImageFilesystem,
  format: Distribution["packageFormat"],
): InstalledPackage[] | undefined {
  if (format === "rpm") {
    for (const path of RPM_SQLITE) {
      const database = filesystem.read(path);
      if (database) return parseRpmDatabase(database, filesystem.read(`${path}${WAL_SUFFIX}`));
    }
    return undefined;
  }
  if (format === "apk") {
    const installed = filesystem.read(APK_INSTALLED);
    return installed ? parseApkInstalled(installed.toString("utf8")) : undefined;
  }
  const status = filesystem.read(DPKG_STATUS);
  const parts = filesystem.list(DPKG_STATUS_DIR);
  if (!status && parts.length === 0) return undefined;
  const packages = status ? parseDpkgStatus(status.toString("utf8")) : [];
  for (const path of parts) packages.push(...parseDpkgStatus(filesystem.read(path)?.toString("utf8") ?? ""));
  return packages;
}

interface ImageManifest {
  readonly configMediaType: string;
  readonly configDigest: string;
  readonly layerDigests: readonly string[];
}

function parseManifest(bytes: Uint8Array): ImageManifest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { config, layers } = value as { config?: { mediaType?: unknown; digest?: unknown }; layers?: unknown };
  if (typeof config?.mediaType !== "string" || typeof config.digest !== "string" || !Array.isArray(layers))
    return undefined;
  const layerDigests: string[] = [];
  for (const layer of layers as unknown[]) {
    const digest = (layer as { digest?: unknown } | null)?.digest;
    if (typeof digest !== "string") return undefined;
    layerDigests.push(digest);
  }
  return { configMediaType: config.mediaType, configDigest: config.digest, layerDigests };
}

/** The config's `os`; a config is small, but it is still read with a ceiling. */
async function readConfigOs(blob: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of blob) {
    size += chunk.length;
    if (size > 4 * 1024 * 1024) return "";
    parts.push(chunk);
  }
  try {
    const config = JSON.parse(Buffer.concat(parts).toString("utf8")) as { os?: unknown } | null;
    return typeof config?.os === "string" ? config.os : "";
  } catch {
    return "";
  }
}
