import type { PackageAdvisory, RangeEvent } from "./osv-advisory.js";

export type VersionCompare = (a: string, b: string) => number;

/** Whether an installed version is affected, and the version that fixes it ("" when none does). */
export interface AdvisoryMatch {
  readonly fixVersion: string;
}

/**
 * Matches an installed version against one advisory: listed in `versions`, or inside one of its
 * ECOSYSTEM ranges. A range is read as OSV defines it: events sorted by version (`introduced: "0"`
 * first), each `introduced` at or below the version opens it, each `fixed` at or below, or
 * `last_affected` below, closes it; the last event that applies decides. The fix reported is the
 * first `fixed` event above the installed version in the range that matched.
 */
export function matchAdvisory(
  advisory: PackageAdvisory,
  version: string,
  compare: VersionCompare,
): AdvisoryMatch | undefined {
  for (const events of advisory.ranges) {
    if (affectedByRange(events, version, compare)) {
      const fixes = events
        .map((e) => e.fixed)
        .filter((f): f is string => f !== undefined && compare(f, version) > 0)
        .sort(compare);
      return { fixVersion: fixes[0] ?? "" };
    }
  }
  if (advisory.versions.some((v) => compare(v, version) === 0)) return { fixVersion: "" };
  return undefined;
}

function affectedByRange(events: readonly RangeEvent[], version: string, compare: VersionCompare): boolean {
  const keyed = events.map((event) => ({ event, at: event.introduced ?? event.fixed ?? event.last_affected ?? "" }));
  // "0" is OSV's "before every version", whatever the ecosystem's ordering makes of it.
  const order = (a: string, b: string) => (a === b ? 0 : a === "0" ? -1 : b === "0" ? 1 : compare(a, b));
  keyed.sort((a, b) => order(a.at, b.at));
  let affected = false;
  for (const { event, at } of keyed) {
    if (event.introduced !== undefined) {
      if (at === "0" || compare(version, at) >= 0) affected = true;
    } else if (event.fixed !== undefined) {
      if (compare(version, at) >= 0) affected = false;
    } else if (compare(version, at) > 0) {
      affected = false;
    }
  }
  return affected;
}
