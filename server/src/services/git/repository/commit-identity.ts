import { GitRepositoryError } from "./git-repository-error.js";

/** Who a commit is by; `time` defaults to now. */
export interface CommitIdentity {
  name: string;
  email: string;
  time?: Date;
}

/**
 * Checks an identity: git writes it as `name <email> time zone` on one line of the commit header, so
 * newlines and angle brackets (and NUL) would forge or break that header.
 */
export function validateIdentity(identity: CommitIdentity, field: string): CommitIdentity {
  const refuse = (why: string): never => {
    throw new GitRepositoryError("invalid_argument", `${field} ${why}`, field);
  };
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  const unsafe = /[\u0000-\u001f\u007f<>]/;
  if (typeof identity?.name !== "string" || identity.name.trim() === "") refuse("name must not be empty");
  if (typeof identity.email !== "string" || identity.email.trim() === "") refuse("email must not be empty");
  if (unsafe.test(identity.name) || unsafe.test(identity.email)) refuse("must not contain <, > or control characters");
  if (identity.time !== undefined && Number.isNaN(identity.time.getTime())) refuse("time is not a valid date");
  return identity;
}

/** A git date that needs no parsing heuristics: seconds since the epoch and a zone. */
function gitDate(time: Date | undefined): string {
  return `@${Math.floor((time ?? new Date()).getTime() / 1000)} +0000`;
}

/** Environment giving commit-tree its author and committer, the only way it takes them. */
export function identityEnvironment(
  author: CommitIdentity & { rawDate?: string },
  committer: CommitIdentity,
): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    // A replayed commit keeps its author date exactly, time zone included.
    GIT_AUTHOR_DATE: author.rawDate ?? gitDate(author.time),
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: gitDate(committer.time),
  };
}
