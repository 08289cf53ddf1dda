/** What the scanner needs of `/etc/os-release`. */
export interface OsRelease {
  readonly id: string;
  readonly versionId: string;
  readonly versionCodename: string;
}

/**
 * Parses os-release: `KEY=value` lines, values bare or in single or double quotes with backslash
 * escapes inside double quotes; comments and blank lines ignored.
 */
export function parseOsRelease(text: string): OsRelease {
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Z0-9_]+)=(.*?)\s*$/.exec(line);
    if (!match) continue;
    let value = match[2]!;
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1).replace(/\\(["\\`$])/g, "$1");
    else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    values.set(match[1]!, value);
  }
  return {
    id: (values.get("ID") ?? "").toLowerCase(),
    versionId: values.get("VERSION_ID") ?? "",
    versionCodename: values.get("VERSION_CODENAME") ?? "",
  };
}

/** Debian's codenames, for a Debian image whose os-release names its release only by codename. */
const DEBIAN_CODENAMES: Record<string, string> = {
  stretch: "9",
  buster: "10",
  bullseye: "11",
  bookworm: "12",
  trixie: "13",
};

/** os-release IDs of rpm distributions, with the OSV ecosystem their advisories are filed under. */
const RPM_ECOSYSTEMS: Record<string, string> = {
  almalinux: "AlmaLinux",
  rocky: "Rocky Linux",
};

/** Which package database a distribution keeps and the OSV ecosystems its advisories are filed under. */
export interface Distribution {
  readonly packageFormat: "dpkg" | "apk" | "rpm";
  /** The OSV ecosystem names to match, the main one first (`Debian:12`, `Alpine:v3.19`, `AlmaLinux:9`). */
  readonly ecosystems: readonly string[];
}

/** The distribution of an os-release, or undefined when the scanner does not know it. */
export function distributionOf(os: OsRelease): Distribution | undefined {
  if (os.id === "debian") {
    const major = /^([0-9]+)/.exec(os.versionId)?.[1] ?? DEBIAN_CODENAMES[os.versionCodename];
    return major ? { packageFormat: "dpkg", ecosystems: [`Debian:${major}`] } : undefined;
  }
  if (os.id === "ubuntu") {
    // OSV files long-term-support releases under `Ubuntu:22.04:LTS` and the others under `Ubuntu:23.10`.
    if (!/^[0-9]+\.[0-9]+$/.test(os.versionId)) return undefined;
    return { packageFormat: "dpkg", ecosystems: [`Ubuntu:${os.versionId}`, `Ubuntu:${os.versionId}:LTS`] };
  }
  if (os.id === "alpine") {
    const branch = /^([0-9]+\.[0-9]+)/.exec(os.versionId)?.[1];
    return branch ? { packageFormat: "apk", ecosystems: [`Alpine:v${branch}`] } : undefined;
  }
  // The rpm distributions that publish OSV advisories, filed by major release.
  const rpmEcosystem = RPM_ECOSYSTEMS[os.id];
  if (rpmEcosystem) {
    const major = /^([0-9]+)/.exec(os.versionId)?.[1];
    return major ? { packageFormat: "rpm", ecosystems: [`${rpmEcosystem}:${major}`] } : undefined;
  }
  return undefined;
}
