import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { advisoriesOfOsvRecord, type PackageAdvisory } from "./osv-advisory.js";

/** The loaded advisories, indexed by ecosystem and package name. */
export interface AdvisoryFeed {
  /** SHA-256 of the files' paths and contents: the same feed has the same version in every process. */
  readonly version: string;
  /** How many advisories (package entries) it holds. */
  readonly size: number;
  /** Files that could not be read as OSV JSON, by path relative to the folder, with why. */
  readonly skipped: readonly { readonly file: string; readonly reason: string }[];
  advisoriesFor(ecosystem: string, name: string): readonly PackageAdvisory[];
}

/**
 * Loads every `*.json` file under `dir` (at any depth, in path order): each one OSV record or a
 * JSON array of records, as OSV's per-ecosystem exports unpack. A file that is not valid JSON is
 * skipped and reported, so one bad file does not hide the rest of the feed.
 */
export async function loadAdvisoryFeed(dir: string): Promise<AdvisoryFeed> {
  const files = (await jsonFiles(dir)).sort();
  const hash = createHash("sha256");
  const index = new Map<string, PackageAdvisory[]>();
  const skipped: { file: string; reason: string }[] = [];
  let size = 0;
  for (const file of files) {
    const name = relative(dir, file);
    const bytes = await readFile(file);
    hash.update(`${name}\0${bytes.length}\0`).update(bytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString("utf8"));
    } catch {
      skipped.push({ file: name, reason: "not valid JSON" });
      continue;
    }
    for (const record of Array.isArray(parsed) ? parsed : [parsed]) {
      for (const { ecosystem, name: pkg, advisory } of advisoriesOfOsvRecord(record)) {
        const key = indexKey(ecosystem, pkg);
        const list = index.get(key);
        if (list) list.push(advisory);
        else index.set(key, [advisory]);
        size++;
      }
    }
  }
  return {
    version: hash.digest("hex"),
    size,
    skipped,
    advisoriesFor: (ecosystem, name) => index.get(indexKey(ecosystem, name)) ?? [],
  };
}

function indexKey(ecosystem: string, name: string): string {
  return `${ecosystem}\0${name}`;
}

async function jsonFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await jsonFiles(path)));
    else if (entry.isFile() && entry.name.endsWith(".json")) found.push(path);
  }
  return found;
}
