/** RFC 6750 section 2.1: `Authorization: Bearer <b64token>`. */
const BEARER = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)$/i;

/** The bearer token of an Authorization header, or undefined when it holds none. */
export function bearerTokenOf(authorization: string | null): string | undefined {
  return BEARER.exec(authorization ?? "")?.[1];
}

/**
 * A `WWW-Authenticate` challenge (RFC 6750 section 3): bare when the request carried no token,
 * with the error and its description otherwise. The description keeps to the characters the RFC
 * allows in it (printable ASCII but `"` and `\`).
 */
export function bearerChallenge(error?: { readonly code: string; readonly description: string }): string {
  if (!error) return "Bearer";
  return `Bearer error="${error.code}", error_description="${error.description.replace(/[^\x20-\x7e]|["\\]/g, "")}"`;
}
