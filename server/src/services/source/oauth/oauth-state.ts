import { createHash, randomBytes } from "node:crypto";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { ProviderName } from "../source-schema.js";

/**
 * The `state` of an authorization request carries everything the exchange needs, so GetOAuthUrl
 * stores nothing: the organization, provider, redirect URI, source, scopes, the PKCE verifier and
 * an expiry, sealed by the secret box (AES-256-GCM: encrypted, so the verifier stays secret on its
 * way through the browser, and authenticated, so it cannot be forged or edited). The organization
 * is also in the associated data: another organization's state does not even open.
 */
export interface OAuthState {
  readonly provider: ProviderName;
  readonly redirectUri: string;
  readonly sourceId: string | undefined;
  readonly scopes: readonly string[];
  /** PKCE code verifier (RFC 7636): 43 characters of base64url. */
  readonly verifier: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

export const OAUTH_STATE_LIFETIME_MS = 10 * 60 * 1000;
/** Longer than any state this server issues: a larger value is refused before it is decoded. */
const MAX_STATE_LENGTH = 8 * 1024;
const FORMAT = 1;

function associatedData(orgId: string): string {
  return `platform.data.source.v1.OAuthState/${orgId}`;
}

export function newCodeVerifier(): string {
  return randomBytes(32).toString("base64url");
}

/** The S256 code challenge of a verifier. */
export function codeChallenge(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

export function sealOAuthState(box: SecretBox, orgId: string, state: OAuthState): string {
  const payload = JSON.stringify({ f: FORMAT, ...state });
  return Buffer.from(box.seal(new TextEncoder().encode(payload), associatedData(orgId))).toString("base64url");
}

/** Why a state is refused; the exchange answers INVALID_ARGUMENT with it. */
export class OAuthStateError extends Error {
  override readonly name = "OAuthStateError";
}

/** The state, if this server issued it for this organization and it has not expired. */
export function openOAuthState(box: SecretBox, orgId: string, text: string, now: number): OAuthState {
  if (text.length > MAX_STATE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text))
    throw new OAuthStateError("state is not a state returned by GetOAuthUrl");
  let parsed: Record<string, unknown>;
  try {
    const opened = box.open(new Uint8Array(Buffer.from(text, "base64url")), associatedData(orgId));
    parsed = JSON.parse(new TextDecoder().decode(opened)) as Record<string, unknown>;
  } catch {
    // Another organization's state, another server's, or edited bytes: all look alike from here.
    throw new OAuthStateError("state is not a state returned by GetOAuthUrl to this organization");
  }
  if (parsed.f !== FORMAT) throw new OAuthStateError("state is of an unknown format");
  const state = parsed as unknown as OAuthState;
  if (state.expiresAt <= now) throw new OAuthStateError("state has expired: start again with GetOAuthUrl");
  return state;
}
