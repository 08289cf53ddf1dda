/**
 * The OCI distribution protocol's error codes, with the HTTP status each is answered with
 * (distribution-spec, "Error Codes"). Every /v2 failure is one of these, in the protocol's body
 * `{"errors":[{"code","message","detail"}]}`.
 */
export const ociErrorStatus = {
  BLOB_UNKNOWN: 404,
  BLOB_UPLOAD_INVALID: 400,
  BLOB_UPLOAD_UNKNOWN: 404,
  DIGEST_INVALID: 400,
  MANIFEST_BLOB_UNKNOWN: 404,
  MANIFEST_INVALID: 400,
  MANIFEST_UNKNOWN: 404,
  NAME_INVALID: 400,
  NAME_UNKNOWN: 404,
  SIZE_INVALID: 400,
  UNAUTHORIZED: 401,
  DENIED: 403,
  UNSUPPORTED: 415,
  TOOMANYREQUESTS: 429,
  /** Not in the specification's table: a tag name that does not match `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`. */
  TAG_INVALID: 400,
  /** A range that does not continue the upload (416, and the upload stays resumable). */
  RANGE_INVALID: 416,
} as const;

export type OciErrorCode = keyof typeof ociErrorStatus;

/** A deliberate protocol error: its code, a message for people, and optional detail for clients. */
export class OciError extends Error {
  override name = "OciError";
  constructor(
    readonly code: OciErrorCode,
    message: string,
    readonly detail?: unknown,
    /** Overrides the code's usual status (a 405 UNSUPPORTED, a 413 SIZE_INVALID). */
    readonly status: number = ociErrorStatus[code],
  ) {
    super(message);
  }
}

/** The protocol's error body for one error. */
export function ociErrorBody(error: OciError): string {
  const entry: { code: string; message: string; detail?: unknown } = { code: error.code, message: error.message };
  if (error.detail !== undefined) entry.detail = error.detail;
  return JSON.stringify({ errors: [entry] });
}
