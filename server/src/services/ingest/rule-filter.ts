/** Which objects of a source a rule takes: a key prefix and content types (`image/*` matches a family). Empty parts match everything. */
export interface RuleFilterSpec {
  readonly prefix: string;
  readonly contentTypes: readonly string[];
}

export function matchesFilter(filter: RuleFilterSpec, object: { key: string; contentType: string }): boolean {
  if (!object.key.startsWith(filter.prefix)) return false;
  if (filter.contentTypes.length === 0) return true;
  const type = object.contentType.split(";")[0]!.trim().toLowerCase();
  return filter.contentTypes.some((wanted) => {
    const pattern = wanted.toLowerCase();
    return pattern.endsWith("/*") ? type.startsWith(pattern.slice(0, -1)) : type === pattern;
  });
}

const CONTENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/i;

/** The problem with a filter's content type, or undefined when it is well formed. */
export function contentTypeProblem(value: string): string | undefined {
  return CONTENT_TYPE_PATTERN.test(value) ? undefined : `"${value}" is not a media type (type/subtype or type/*)`;
}
