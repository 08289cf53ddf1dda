import { createHmac, timingSafeEqual } from "node:crypto";
import { RecentMap } from "../../../cache/recent-map.js";

/** How long a registry token is good for: clients ask for another on the next 401. */
export const REGISTRY_TOKEN_TTL_SECONDS = 300;

/** The purpose the token key is derived for from the server secret (`box.deriveKey`). */
export const REGISTRY_TOKEN_KEY_PURPOSE = "platform registry tokens v1";

/** What a token grants: the organization's key it was issued to, and actions per repository. */
export interface RegistryTokenClaims {
  /** The API key the token was issued to; absent for an anonymous token. */
  readonly keyId?: string;
  readonly orgId?: string;
  readonly orgName?: string;
  /** `<org>/<repo>` → actions (`pull`, `push`, `delete`). */
  readonly access: Readonly<Record<string, readonly string[]>>;
  /** Expiry, in seconds since the epoch. */
  readonly exp: number;
}

/** Verified tokens kept, so that the requests after the first skip the signature check. */
const VERIFIED_TOKENS_KEPT = 1024;

const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

/**
 * Short-lived bearer tokens for the token flow standard clients follow (distribution's token auth):
 * an HS256 JWT signed with a key only this server's processes hold. A token outlives a revoked key
 * by at most its TTL, which is why the TTL is short.
 */
export function createRegistryTokens(key: Uint8Array, now: () => number = Date.now) {
  const sign = (input: string) => createHmac("sha256", key).update(input).digest();
  const verified = new RecentMap<string, RegistryTokenClaims>(VERIFIED_TOKENS_KEPT);
  function genuineClaims(token: string): RegistryTokenClaims | undefined {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== header) return undefined;
    const expected = sign(`${parts[0]}.${parts[1]}`);
    const given = Buffer.from(parts[2]!, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString()) as RegistryTokenClaims;
      return typeof claims.exp === "number" ? claims : undefined;
    } catch {
      return undefined;
    }
  }
  return {
    issue(claims: Omit<RegistryTokenClaims, "exp">): { token: string; expiresIn: number; issuedAt: string } {
      const issued = now();
      const body: RegistryTokenClaims = { ...claims, exp: Math.floor(issued / 1000) + REGISTRY_TOKEN_TTL_SECONDS };
      const input = `${header}.${base64url(JSON.stringify(body))}`;
      return {
        token: `${input}.${sign(input).toString("base64url")}`,
        expiresIn: REGISTRY_TOKEN_TTL_SECONDS,
        issuedAt: new Date(issued).toISOString(),
      };
    },
    /** The claims of a genuine, unexpired token, else undefined. */
    verify(token: string): RegistryTokenClaims | undefined {
      // A client sends the same token with every request of a push or pull: its signature is
      // checked once. Only genuine tokens are kept, so what the map holds is bounded by the tokens
      // this server issued, never by what callers send.
      let claims = verified.get(token);
      if (!claims) {
        claims = genuineClaims(token);
        if (!claims) return undefined;
        verified.set(token, claims);
      }
      return claims.exp * 1000 > now() ? claims : undefined;
    },
  };
}

export type RegistryTokens = ReturnType<typeof createRegistryTokens>;

function base64url(text: string): string {
  return Buffer.from(text).toString("base64url");
}
