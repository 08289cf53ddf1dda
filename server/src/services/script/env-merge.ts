/** Environment variables as either a Map or a plain record of key to value. */
export type EnvironmentVariables = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

/**
 * The environment a thread started with `load_env` runs with: the script's overlay merged over the
 * organization's tenant variables. The contract's rule: "an overlay value wins on a key collision
 * only when it is non-empty; an empty or absent overlay value defers to the tenant value".
 *
 * | tenant      | overlay     | result          |
 * |-------------|-------------|-----------------|
 * | `K=t`       | —           | `K=t`           |
 * | `K=t`       | `K=o`       | `K=o`           |
 * | `K=t`       | `K=""`      | `K=t`           |
 * | —           | `K=o`       | `K=o`           |
 * | —           | `K=""`      | `K` absent      |
 * | `K=""`      | any         | as the rows above with `t = ""` |
 *
 * The one case the sentence leaves open is an empty overlay value with no tenant value. An empty
 * overlay value is not a value of its own but a pass-through marker ("the tenant value passes
 * through", as UpdateScriptEnv says); deferring to a tenant value that does not exist yields no
 * value, so the key is left out rather than set to "". The merge is thus exactly "tenant variables,
 * then the non-empty overlay values over them", and a script that wants a variable set to "" does
 * not get one from an overlay alone (the tenant variable decides).
 *
 * The result is a fresh plain object built with `Object.fromEntries`, so keys such as `__proto__`
 * (a valid variable name) are ordinary own properties; its keys are sorted by code point so that
 * the environment a run sees does not depend on the order rows were read in.
 */
export function mergeEnvironment(tenant: EnvironmentVariables, overlay: EnvironmentVariables): Record<string, string> {
  const merged = new Map<string, string>(entriesOf(tenant));
  for (const [key, value] of entriesOf(overlay)) {
    if (value !== "") merged.set(key, value);
  }
  return Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function entriesOf(variables: EnvironmentVariables): Iterable<readonly [string, string]> {
  return variables instanceof Map ? variables.entries() : Object.entries(variables);
}
