/**
 * An answer in S3's error shape: a code clients switch on (`NoSuchKey`), the HTTP status S3 gives
 * it, and a message for people. Every refusal of the S3 listener is one of these; anything else
 * thrown is answered `InternalError` with a generic message.
 */
export class S3Error extends Error {
  override readonly name = "S3Error";
  constructor(
    readonly code: S3ErrorCode,
    message: string,
    /** Extra elements of the `<Error>` body (`Key`, `BucketName`, `UploadId`…). */
    readonly details: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  get status(): number {
    return s3ErrorStatus[this.code];
  }
}

/** The bucket named is not the caller's (or no longer exists). */
export const noSuchBucket = (name: string) =>
  new S3Error("NoSuchBucket", "the specified bucket does not exist", { BucketName: name });

/** The codes this listener answers and their statuses, as S3 documents them. */
export const s3ErrorStatus = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketAlreadyExists: 409,
  BucketAlreadyOwnedByYou: 409,
  BucketNotEmpty: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  KeyTooLongError: 400,
  MalformedXML: 400,
  MetadataTooLarge: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  PreconditionFailed: 412,
  RequestTimeTooSkewed: 403,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
} as const satisfies Record<string, number>;

export type S3ErrorCode = keyof typeof s3ErrorStatus;
