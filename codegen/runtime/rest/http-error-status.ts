/**
 * Every registered HTTP error status (RFC 9110, 6585, 7725, 8470). A document's `default` response
 * stands for the ones it does not list, so its generated type is `Exclude<HttpErrorStatus, listed>`
 * and a result still narrows by status.
 */
export type HttpErrorStatus =
  | 400
  | 401
  | 402
  | 403
  | 404
  | 405
  | 406
  | 407
  | 408
  | 409
  | 410
  | 411
  | 412
  | 413
  | 414
  | 415
  | 416
  | 417
  | 421
  | 422
  | 423
  | 424
  | 425
  | 426
  | 428
  | 429
  | 431
  | 451
  | 500
  | 501
  | 502
  | 503
  | 504
  | 505
  | 506
  | 507
  | 508
  | 510
  | 511;
