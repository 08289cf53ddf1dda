/**
 * Where a CI secret applies, after GitHub Actions' and Gitea's secrets: the whole organization,
 * one repository, or one deployment environment of a repository. A job sees the union, the
 * narrower scope winning on a name clash (environment > repository > organization).
 */
export type CiSecretScope =
  | { readonly kind: "organization" }
  | { readonly kind: "repository"; readonly repoId: string }
  | { readonly kind: "environment"; readonly repoId: string; readonly environment: string };

/** Names as environment variables take them, the rule GitHub applies: `[A-Z_][A-Z0-9_]*`. */
const NAME_PATTERN = /^[A-Z_][A-Z0-9_]{0,254}$/;
/** Environment names appear in paths: no `/`, no leading dot, bounded like branch names. */
const ENVIRONMENT_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;
/** GitHub's cap on one secret; values are meant for tokens and keys, not files. */
export const CI_SECRET_VALUE_MAX_BYTES = 48 * 1024;

/** Bad input, with a message that names the field and never repeats a value. */
export class CiSecretInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "CiSecretInputError";
  }
}

export function validCiSecretName(name: string): string {
  if (!NAME_PATTERN.test(name)) {
    throw new CiSecretInputError("name", "must be 1 to 255 characters of A-Z, 0-9 and _, not starting with a digit");
  }
  return name;
}

export function validEnvironmentName(environment: string): string {
  if (!ENVIRONMENT_PATTERN.test(environment)) {
    throw new CiSecretInputError("environment", "must be 1 to 255 characters of letters, digits, '.', '-' and '_'");
  }
  return environment;
}

export function validCiSecretValue(value: unknown): string {
  if (typeof value !== "string" || value === "") throw new CiSecretInputError("value", "is required (a string)");
  if (value.includes("\0")) throw new CiSecretInputError("value", "must not hold NUL");
  if (Buffer.byteLength(value, "utf8") > CI_SECRET_VALUE_MAX_BYTES) {
    throw new CiSecretInputError("value", `must be at most ${CI_SECRET_VALUE_MAX_BYTES} bytes`);
  }
  return value;
}

/**
 * The key of a scope in storage: empty for the organization, the repository id, or the id and
 * environment joined by `/` (which neither part can hold), so no two scopes share a key.
 */
export function scopeKey(scope: CiSecretScope): string {
  switch (scope.kind) {
    case "organization":
      return "";
    case "repository":
      return scope.repoId;
    case "environment":
      return `${scope.repoId}/${scope.environment}`;
  }
}

/** Binds a sealed value to its organization, scope and name, so a copied row does not open. */
export function ciSecretAssociatedData(orgId: string, scope: CiSecretScope, name: string): string {
  return `platform.git.CiSecret/${orgId}/${scopeKey(scope)}/${name}`;
}
