import type { InstalledPackage } from "./installed-package.js";

/**
 * The packages of apk's database (`lib/apk/db/installed`): one block per package, separated by
 * blank lines, of `<letter>:<value>` lines: `P` the name, `V` the version, `o` the origin (the
 * aports package it was built from, which Alpine's advisories name).
 */
export function parseApkInstalled(text: string): InstalledPackage[] {
  const packages: InstalledPackage[] = [];
  for (const block of text.split(/\n[ \t]*\n/)) {
    let name = "";
    let version = "";
    let origin = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("P:")) name = line.slice(2).trim();
      else if (line.startsWith("V:")) version = line.slice(2).trim();
      else if (line.startsWith("o:")) origin = line.slice(2).trim();
    }
    if (name && version) packages.push({ name, version, sourceName: origin || name, sourceVersion: version });
  }
  return packages;
}
