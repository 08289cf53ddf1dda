import type { JobObjectChange } from "./ingest-schema.js";
import type { SourceObject } from "./ingest-ports.js";
import { matchesFilter, type RuleFilterSpec } from "./rule-filter.js";

export interface PlannedChange {
  readonly key: string;
  readonly change: JobObjectChange;
}

/**
 * What a pipeline must do to catch up with a source listing, within a rule's filter and a key
 * prefix: ingest the objects that are new or whose etag changed (all of them when forced), and drop
 * the chunks of objects it ingested that the listing no longer has.
 */
export function planChanges(
  listing: readonly SourceObject[],
  scope: { readonly filter: RuleFilterSpec; readonly prefix: string },
  ingested: ReadonlyMap<string, string>,
  force: boolean,
): PlannedChange[] {
  const inScope = (key: string) => key.startsWith(scope.prefix) && key.startsWith(scope.filter.prefix);
  const planned: PlannedChange[] = [];
  const present = new Set<string>();
  for (const object of listing) {
    if (!inScope(object.key) || !matchesFilter(scope.filter, object)) continue;
    present.add(object.key);
    if (force || ingested.get(object.key) !== object.etag) planned.push({ key: object.key, change: "put" });
  }
  for (const key of ingested.keys()) {
    if (inScope(key) && !present.has(key)) planned.push({ key, change: "delete" });
  }
  return planned;
}

/** The listing's prefix: the narrower of the rule's and the request's (they must not conflict to match anything). */
export function listingPrefix(rulePrefix: string, requested: string): string {
  return requested.startsWith(rulePrefix) ? requested : rulePrefix;
}
