import { cvss3BaseScore } from "./cvss3-score.js";
import { severityOfScore, severityOfWord, type Severity } from "./vulnerability-severity.js";

/** One OSV range event: exactly one of its keys is set. */
export interface RangeEvent {
  readonly introduced?: string;
  readonly fixed?: string;
  readonly last_affected?: string;
}

/** What one OSV record says about one package of one ecosystem. */
export interface PackageAdvisory {
  readonly id: string;
  readonly severity: Severity;
  readonly description: string;
  readonly links: readonly string[];
  /** The events of each ECOSYSTEM range (other range types do not apply to distribution packages). */
  readonly ranges: readonly (readonly RangeEvent[])[];
  /** Versions listed as affected one by one. */
  readonly versions: readonly string[];
}

export interface IndexedAdvisory {
  readonly ecosystem: string;
  readonly name: string;
  readonly advisory: PackageAdvisory;
}

/**
 * The package advisories of one OSV record (https://ossf.github.io/osv-schema/), read defensively:
 * the feed is files on disk, so a malformed field is skipped rather than trusted. Withdrawn records
 * give nothing. Severity: an affected entry's `database_specific.severity` or `ecosystem_specific
 * .severity` word first (the distribution's own rating of its package), then the record's
 * `database_specific.severity`, then the highest CVSS v3 base score in `severity[]`, else Unknown.
 */
export function advisoriesOfOsvRecord(record: unknown): IndexedAdvisory[] {
  if (!isObject(record) || typeof record.id !== "string" || record.withdrawn) return [];
  const id = record.id;
  const description = stringOf(record.summary) || stringOf(record.details);
  const links = [
    ...new Set(
      arrayOf(record.references)
        .map((r) => (isObject(r) ? stringOf(r.url) : ""))
        .filter(Boolean),
    ),
  ];
  const recordSeverity = wordSeverity(record.database_specific) ?? scoreSeverity(record.severity);
  const found: IndexedAdvisory[] = [];
  for (const affected of arrayOf(record.affected)) {
    if (!isObject(affected) || !isObject(affected.package)) continue;
    const ecosystem = stringOf(affected.package.ecosystem);
    const name = stringOf(affected.package.name);
    if (!ecosystem || !name) continue;
    const ranges = arrayOf(affected.ranges)
      .filter((r): r is Record<string, unknown> => isObject(r) && r.type === "ECOSYSTEM")
      .map((r) =>
        arrayOf(r.events)
          .filter(isObject)
          .map(eventOf)
          .filter((e) => e !== undefined),
      );
    const versions = arrayOf(affected.versions).filter((v): v is string => typeof v === "string");
    const severity =
      wordSeverity(affected.database_specific) ??
      wordSeverity(affected.ecosystem_specific) ??
      recordSeverity ??
      scoreSeverity(affected.severity) ??
      "Unknown";
    found.push({ ecosystem, name, advisory: { id, severity, description, links, ranges, versions } });
  }
  return found;
}

function eventOf(event: Record<string, unknown>): RangeEvent | undefined {
  if (typeof event.introduced === "string") return { introduced: event.introduced };
  if (typeof event.fixed === "string") return { fixed: event.fixed };
  if (typeof event.last_affected === "string") return { last_affected: event.last_affected };
  return undefined;
}

function wordSeverity(specific: unknown): Severity | undefined {
  return isObject(specific) && typeof specific.severity === "string" ? severityOfWord(specific.severity) : undefined;
}

/** The worst of the CVSS v3 vectors (or plain scores) in an OSV `severity` list. */
function scoreSeverity(list: unknown): Severity | undefined {
  let best: number | undefined;
  for (const entry of arrayOf(list)) {
    if (!isObject(entry) || typeof entry.score !== "string") continue;
    const word = severityOfWord(entry.score);
    const score =
      entry.type === "CVSS_V3"
        ? cvss3BaseScore(entry.score)
        : /^[0-9]+(\.[0-9]+)?$/.test(entry.score)
          ? Number(entry.score)
          : undefined;
    if (score !== undefined) best = Math.max(best ?? 0, score);
    else if (word) return word;
  }
  return best === undefined ? undefined : severityOfScore(best);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringOf(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}
