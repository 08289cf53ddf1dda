import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";

/** RFC 7636: challenges and verifiers are 43 to 128 characters of the URI unreserved set. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** Checks an authorization request's `code_challenge`; only S256 is accepted. */
export function checkCodeChallenge(challenge: string, method: string): string {
  if (method !== "S256")
    throw new ConnectError(`code_challenge_method must be S256, got ${JSON.stringify(method)}`, Code.InvalidArgument);
  if (!PKCE_VALUE.test(challenge))
    throw new ConnectError(
      "code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'",
      Code.InvalidArgument,
    );
  return challenge;
}

/** Whether `BASE64URL(SHA256(verifier))` equals the challenge, compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"), "ascii");
  const expected = Buffer.from(challenge, "ascii");
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
