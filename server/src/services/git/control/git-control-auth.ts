import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import type { RestCallContext, RestMiddleware } from "@platform/codegen/runtime/server";
import type { NodeResponse } from "../../../transport/plane-handler.js";
import { GitAccessError, identifyGitCaller, type GitAccessOptions, type GitCaller } from "../git-access.js";
import { GitRepositoryError } from "../repository/index.js";
import { SshKeyInputError } from "../ssh-keys.js";

export type KeyCaller = Extract<GitCaller, { kind: "key" }>;

const callerKey = createContextKey<KeyCaller | undefined>(undefined, {
  description: "the git control plane's caller",
});

export const BASIC_CHALLENGE = 'Basic realm="git", charset="UTF-8"';

/** The control plane's answers start with what went wrong: `not found: ...`, `conflict: ...`. */
const prefixes: Partial<Record<Code, string>> = {
  [Code.InvalidArgument]: "invalid argument",
  [Code.Unauthenticated]: "unauthorized",
  [Code.PermissionDenied]: "forbidden",
  [Code.NotFound]: "not found",
  [Code.AlreadyExists]: "conflict",
  [Code.Aborted]: "conflict",
  [Code.FailedPrecondition]: "conflict",
  [Code.DeadlineExceeded]: "timeout",
};

const accessCodes = { 401: Code.Unauthenticated, 403: Code.PermissionDenied, 404: Code.NotFound } as const;
const repositoryCodes = {
  not_found: Code.NotFound,
  invalid_argument: Code.InvalidArgument,
  conflict: Code.Aborted,
  timeout: Code.DeadlineExceeded,
} as const;

/**
 * The one place the plane's failures take their wire form: access refusals, repository and key
 * errors become statuses, every message gets its prefix, and a 401 carries the Basic challenge.
 * Anything else (a bug, the database gone) stays an internal error without detail.
 */
function asWireError(error: unknown): unknown {
  let code: Code | undefined;
  let message = "";
  if (error instanceof GitAccessError) [code, message] = [accessCodes[error.status], error.message];
  else if (error instanceof SshKeyInputError)
    [code, message] = [error.status === 409 ? Code.AlreadyExists : Code.InvalidArgument, error.message];
  else if (error instanceof GitRepositoryError && error.kind !== "failed")
    [code, message] = [repositoryCodes[error.kind], error.message];
  else if (error instanceof ConnectError) [code, message] = [error.code, error.rawMessage];
  if (code === undefined) return error;
  const prefix = prefixes[code];
  return new ConnectError(prefix && !message.startsWith(`${prefix}:`) ? `${prefix}: ${message}` : message, code);
}

/**
 * Authenticates every call (an API key over Basic or Bearer; anonymous callers use the wire) and
 * gives errors their wire form. Roles are checked per operation, against the repository it names.
 */
export function createGitControlAuth(options: GitAccessOptions): RestMiddleware {
  return (next) => async (call) => {
    try {
      const caller = await identifyGitCaller(options, call.context.requestHeader.get("authorization") ?? undefined);
      if (caller.kind === "anonymous")
        throw new GitAccessError(401, "send an API key over HTTP Basic (as the password) or as a Bearer token");
      call.context.values.set(callerKey, caller);
      return await next(call);
    } catch (error) {
      const wire = asWireError(error);
      if (wire instanceof ConnectError && wire.code === Code.Unauthenticated)
        call.context.responseHeader.set("www-authenticate", BASIC_CHALLENGE);
      throw wire;
    }
  };
}

/**
 * An access refusal answered outside the generated plane (the wire, the log tail), in the
 * plane's plain-text form: the status's prefix, and the Basic challenge on a 401.
 */
export function writeAccessRefusal(res: NodeResponse, error: GitAccessError): void {
  res.writeHead(error.status, {
    "content-type": "text/plain; charset=utf-8",
    ...(error.status === 401 ? { "www-authenticate": BASIC_CHALLENGE } : {}),
  });
  res.end(`${prefixes[accessCodes[error.status]]}: ${error.message}\n`);
}

export function gitCaller(context: Pick<RestCallContext, "values">): KeyCaller {
  const caller = context.values.get(callerKey);
  if (!caller) throw new ConnectError("no authenticated caller", Code.Unauthenticated);
  return caller;
}
