import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { ErrorBodyForm } from "./rest-plane.js";

/** An error as the runtime knows it before it is written in a plane's shape. */
export interface ErrorFacts {
  readonly status: number;
  readonly code: Code;
  readonly message: string;
}

/**
 * The RFC 6749 `error` value for errors the runtime writes itself. A handler that needs a specific
 * OAuth code (`invalid_grant`, `unsupported_grant_type`) returns it as a typed result instead.
 */
const oauthCodes: Partial<Record<Code, string>> = {
  [Code.InvalidArgument]: "invalid_request",
  [Code.OutOfRange]: "invalid_request",
  [Code.FailedPrecondition]: "invalid_request",
  [Code.NotFound]: "invalid_request",
  [Code.AlreadyExists]: "invalid_request",
  [Code.Aborted]: "invalid_request",
  [Code.Unimplemented]: "invalid_request",
  [Code.Unauthenticated]: "invalid_grant",
  [Code.PermissionDenied]: "access_denied",
  [Code.ResourceExhausted]: "temporarily_unavailable",
  [Code.Unavailable]: "temporarily_unavailable",
};

/** Writes an error in the shape the plane's document gives its error responses. */
export function renderErrorBody(form: ErrorBodyForm, error: ErrorFacts): { mediaType: string; text: string } {
  switch (form) {
    case "oauth":
      return json({ error: oauthCodes[error.code] ?? "server_error", error_description: error.message });
    case "error":
      return json({ error: error.message });
    case "code-message":
      return json({ code: codeToString(error.code), message: error.message });
    case "message":
      return json({ message: error.message });
    case "text":
      return { mediaType: "text/plain", text: error.message };
    case "html":
      return { mediaType: "text/html", text: errorPage(error) };
  }
}

/**
 * Which of an operation's error shapes answers a request: HTML for a form post when the
 * operation offers HTML (a browser posted a page's form), else its first other shape.
 */
export function chooseErrorForm(
  forms: readonly ErrorBodyForm[],
  requestMediaType: string,
  fallback: ErrorBodyForm,
): ErrorBodyForm {
  const other = forms.find((form) => form !== "html");
  if (forms.includes("html") && (other === undefined || requestMediaType === "application/x-www-form-urlencoded"))
    return "html";
  return other ?? fallback;
}

function errorPage(error: ErrorFacts): string {
  const message = escapeHtml(error.message);
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>Error ${error.status}</title></head><body><h1>Error ${error.status}</h1><p>${message}</p></body></html>\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function json(body: Record<string, string>): { mediaType: string; text: string } {
  return { mediaType: "application/json", text: JSON.stringify(body) };
}

/**
 * The human-readable message of an error body of any of the forms above, for the SDK's error
 * message; undefined when the body has none.
 */
export function messageOfErrorBody(body: unknown): string | undefined {
  if (typeof body === "string") return body.trim() === "" ? undefined : body.trim();
  if (typeof body !== "object" || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  for (const key of ["error_description", "message", "error"]) {
    const value = fields[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}
