import { GitRepositoryError } from "./git-repository-error.js";

/** Longer names are refused before git sees them; real refs are far shorter. */
export const MAX_REF_NAME_LENGTH = 1024;

/**
 * Checks a ref name, short (`main`, `v1.0`) or full (`refs/heads/main`), or a commit id, by the rules of
 * `git check-ref-format --allow-onelevel`, and also refuses a leading `-` so that the value can never be
 * read as an option. Returns the name unchanged; throws `invalid_argument` naming `field`.
 */
export function validateRefName(ref: string, field = "ref"): string {
  const refuse = (why: string): never => {
    throw new GitRepositoryError("invalid_argument", `${field} ${why}`, field);
  };
  if (typeof ref !== "string" || ref === "") refuse("must not be empty");
  if (ref.length > MAX_REF_NAME_LENGTH) refuse(`must be at most ${MAX_REF_NAME_LENGTH} characters`);
  if (ref.startsWith("-")) refuse("must not start with -");
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(ref))
    refuse("must not contain spaces, control characters or any of ~^:?*[\\");
  if (ref.includes("..")) refuse("must not contain ..");
  if (ref.includes("@{")) refuse("must not contain @{");
  if (ref === "@") refuse("must not be @");
  if (ref.endsWith("/") || ref.endsWith(".")) refuse("must not end with / or .");
  if (ref.startsWith("/")) refuse("must not start with /");
  if (ref.includes("//")) refuse("must not contain //");
  for (const component of ref.split("/")) {
    if (component.startsWith(".")) refuse("must not have a component starting with .");
    if (component.endsWith(".lock")) refuse("must not have a component ending with .lock");
  }
  return ref;
}

/** A full or abbreviated object id (SHA-1 or SHA-256), as git accepts it on the command line. */
export function isObjectId(value: string): boolean {
  return /^[0-9a-f]{4,64}$/i.test(value);
}
