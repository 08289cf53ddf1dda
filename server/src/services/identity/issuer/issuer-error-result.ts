import type { RestOperation } from "@platform/codegen/runtime";
import type { RestResult } from "@platform/codegen/runtime/server";
import { plainBranding, renderMessagePage, type PageBranding } from "./hosted-page.js";

const OAUTH_BY_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request",
  401: "invalid_grant",
  403: "access_denied",
  404: "invalid_request",
  429: "too_many_requests",
  503: "temporarily_unavailable",
};

const TITLE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "Something is wrong with this link",
  401: "This link no longer works",
  403: "Access denied",
  404: "Not found",
  429: "Too many attempts",
  503: "Temporarily unavailable",
};

export interface ErrorResultOptions {
  /** The RFC 6749 code, when the status alone does not say it. */
  readonly oauthError?: string;
  readonly headers?: Readonly<Record<string, string | number>>;
  /** The pool's branding for an HTML answer; absent before the pool is known. */
  readonly branding?: PageBranding;
}

/**
 * An error answer in the shape the operation documents: RFC 6749 `{error, error_description}` on
 * the token endpoint, `{error}` on the other JSON endpoints, a branded page where a browser is
 * looking (page GETs, and form posts to endpoints that also take JSON). Middleware answers with
 * it too, so a 404, 429 or 503 reads the same whichever layer decided it.
 */
export function issuerErrorResult(
  operation: RestOperation,
  requestHeader: Headers,
  status: number,
  message: string,
  options: ErrorResultOptions = {},
): RestResult {
  const forms = operation.errorBody;
  const formPost = (requestHeader.get("content-type") ?? "")
    .toLowerCase()
    .startsWith("application/x-www-form-urlencoded");
  const headers = options.headers ?? {};
  if (forms.includes("html") && (forms.length === 1 || formPost)) {
    const page = renderMessagePage(
      options.branding ?? plainBranding("Sign in"),
      TITLE_BY_STATUS[status] ?? "Error",
      message,
      "error",
    );
    return { status, body: page.html, contentType: "text/html", headers: { ...page.headers, ...headers } };
  }
  if (forms.includes("oauth")) {
    const error = options.oauthError ?? OAUTH_BY_STATUS[status] ?? "server_error";
    return {
      status,
      body: { error, error_description: message },
      contentType: "application/json",
      headers: { "cache-control": "no-store", ...headers },
    };
  }
  return { status, body: { error: message }, contentType: "application/json", headers };
}
