/**
 * The pattern among a repository's immutability rules that protects `tag`, or undefined. Patterns
 * are globs over the whole tag: `*` matches any run of characters, `?` one character, and every other
 * character itself (`v*` protects `v1.2.0`, `release-?` protects `release-1`).
 */
export function immutableTagPattern(patterns: readonly string[], tag: string): string | undefined {
  return patterns.find((pattern) => globToRegExp(pattern).test(tag));
}

function globToRegExp(pattern: string): RegExp {
  const source = [...pattern]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`);
}
