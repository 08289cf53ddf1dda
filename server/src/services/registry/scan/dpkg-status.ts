import type { InstalledPackage } from "./installed-package.js";

/**
 * The installed packages of a dpkg status file (`var/lib/dpkg/status`, or one file of the
 * distroless `var/lib/dpkg/status.d/`): RFC 822-style paragraphs separated by blank lines. A
 * paragraph counts when its Status is `install ok installed`, or when it has no Status at all, as
 * the status.d files of distroless images do not.
 */
export function parseDpkgStatus(text: string): InstalledPackage[] {
  const packages: InstalledPackage[] = [];
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    const fields = paragraphFields(paragraph);
    const name = fields.get("package");
    const version = fields.get("version");
    if (!name || !version) continue;
    const status = fields.get("status");
    if (status !== undefined && status.split(/\s+/)[2] !== "installed") continue;
    // `Source: name` or `Source: name (version)` when the source's version differs from the binary's.
    const source = /^(\S+)(?:\s+\((\S+)\))?/.exec(fields.get("source") ?? "");
    packages.push({
      name,
      version,
      sourceName: source?.[1] ?? name,
      sourceVersion: source?.[2] ?? version,
    });
  }
  return packages;
}

function paragraphFields(paragraph: string): Map<string, string> {
  const fields = new Map<string, string>();
  let last: string | undefined;
  for (const line of paragraph.split("\n")) {
    if (/^[ \t]/.test(line)) {
      if (last) fields.set(last, `${fields.get(last)}\n${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    last = line.slice(0, colon).toLowerCase();
    fields.set(last, line.slice(colon + 1).trim());
  }
  return fields;
}
