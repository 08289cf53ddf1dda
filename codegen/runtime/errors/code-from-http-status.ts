import { Code } from "@connectrpc/connect";

/**
 * The code of an HTTP error status from a REST plane, so that SDK callers handle every plane's
 * errors by one `code` and the retry policy treats 429 and 503 as it treats their RPC twins.
 * Connect's own table is not used: it reads statuses as a gRPC proxy would (400 is INTERNAL).
 */
export function codeFromHttpStatus(status: number): Code {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.NotFound;
    case 405:
    case 501:
      return Code.Unimplemented;
    case 408:
    case 504:
      return Code.DeadlineExceeded;
    case 409:
      return Code.AlreadyExists;
    case 412:
      return Code.FailedPrecondition;
    case 429:
      return Code.ResourceExhausted;
    case 499:
      return Code.Canceled;
    case 502:
    case 503:
      return Code.Unavailable;
    default:
      return status >= 500 ? Code.Internal : Code.Unknown;
  }
}
