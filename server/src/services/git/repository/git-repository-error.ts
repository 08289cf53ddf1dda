/**
 * Why a repository operation failed. The REST plane maps the kind to a status (`not_found` 404,
 * `invalid_argument` 400, `conflict` 409, `timeout` 504, `failed` 500); the message is safe to show
 * to the caller, while `detail` (git's own stderr) is for the log only, since it can name server paths.
 */
export type GitRepositoryErrorKind = "not_found" | "invalid_argument" | "conflict" | "timeout" | "failed";

export class GitRepositoryError extends Error {
  override name = "GitRepositoryError";
  constructor(
    readonly kind: GitRepositoryErrorKind,
    message: string,
    /** The input field at fault, for `invalid_argument` and `not_found`. */
    readonly field?: string,
    /** Git's stderr or other internal context; never sent to a client. */
    readonly detail?: string,
  ) {
    super(message);
  }
}
