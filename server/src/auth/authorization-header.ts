/** Why an Authorization header could not be read; the message says what is wrong with it. */
export class AuthorizationHeaderError extends Error {
  override name = "AuthorizationHeaderError";
}

/**
 * The secret an `Authorization` header carries, for the planes that take an API key over HTTP Basic
 * (any username, the key as the password) as well as Bearer: git and the container registry, whose
 * standard clients only speak Basic.
 */
export function readAuthorization(header: string): { readonly scheme: "basic" | "bearer"; readonly secret: string } {
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header.trim());
  if (!match) throw new AuthorizationHeaderError("malformed Authorization header");
  const scheme = match[1]!.toLowerCase();
  if (scheme === "bearer") return { scheme, secret: match[2]! };
  if (scheme !== "basic") {
    throw new AuthorizationHeaderError(
      `unsupported authorization scheme "${match[1]!.slice(0, 20)}": use Basic or Bearer`,
    );
  }
  const decoded = Buffer.from(match[2]!, "base64").toString();
  const colon = decoded.indexOf(":");
  if (colon < 0) throw new AuthorizationHeaderError("malformed Basic credentials: expected <any user>:<API key>");
  return { scheme, secret: decoded.slice(colon + 1) };
}
