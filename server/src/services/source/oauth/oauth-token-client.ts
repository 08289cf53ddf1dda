import type { Dispatcher } from "undici";
import { privateNetworkErrorOf } from "../../../net/private-network.js";
import type { OAuthProviderConfig } from "./oauth-provider-config.js";

/** What a token endpoint answered (RFC 6749 section 5.1), checked. */
export interface TokenSet {
  readonly accessToken: string;
  readonly tokenType: string;
  readonly refreshToken: string | undefined;
  /** Seconds; undefined when the provider does not say. */
  readonly expiresIn: number | undefined;
  /** Granted scopes; undefined when the provider does not say (then they are those requested). */
  readonly scopes: readonly string[] | undefined;
  readonly idToken: string | undefined;
}

export type TokenGrant =
  | { readonly grant_type: "authorization_code"; code: string; redirect_uri: string; code_verifier: string }
  | { readonly grant_type: "refresh_token"; refresh_token: string };

/**
 * A token request that did not give tokens. `refused`: the provider answered an OAuth error (its
 * `error` code, such as invalid_grant, is kept; its free-text description is not, since a provider
 * could echo what it was sent); `unreachable`: no answer (network, timeout); `blocked`: the
 * outbound guard refused the endpoint's address; `malformed`: an answer that is not a token response.
 */
export class TokenEndpointError extends Error {
  override readonly name = "TokenEndpointError";
  constructor(
    readonly kind: "refused" | "unreachable" | "malformed" | "blocked",
    message: string,
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

export interface TokenClientOptions {
  /** The outbound guard, or a plain agent when private networks are allowed. */
  readonly dispatcher: Dispatcher;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 15_000;

/** Posts a grant to the provider's token endpoint with the client's authentication. */
export async function requestTokens(
  provider: OAuthProviderConfig,
  grant: TokenGrant,
  options: TokenClientOptions,
): Promise<TokenSet> {
  const body = new URLSearchParams(grant as unknown as Record<string, string>);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (provider.tokenEndpointAuthMethod === "client_secret_basic") {
    // RFC 6749 section 2.3.1: each part form-urlencoded before the Basic encoding.
    const user = formEncode(provider.clientId);
    const password = formEncode(provider.clientSecret ?? "");
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  } else {
    body.set("client_id", provider.clientId);
    if (provider.tokenEndpointAuthMethod === "client_secret_post")
      body.set("client_secret", provider.clientSecret ?? "");
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    // Node's fetch takes undici's `dispatcher`, which the DOM RequestInit type does not declare.
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method: "POST",
      headers,
      body,
      // A token request carries the client secret: it is never replayed to wherever a redirect points.
      redirect: "manual",
      signal,
      dispatcher: options.dispatcher,
    };
    response = await fetch(provider.tokenEndpoint, init);
    text = await readLimited(response);
  } catch (error) {
    const refused = privateNetworkErrorOf(error);
    if (refused) throw new TokenEndpointError("blocked", `the token endpoint is refused: ${refused.message}`);
    const why = timeout.aborted ? "it did not answer in time" : "it could not be reached";
    throw new TokenEndpointError("unreachable", `the provider's token endpoint failed: ${why}`);
  }
  const json = parseJson(text);
  if (!response.ok) {
    const code = typeof json?.error === "string" && /^[\x20-\x7e]{1,64}$/.test(json.error) ? json.error : undefined;
    if (code && response.status >= 400 && response.status < 500)
      throw new TokenEndpointError("refused", `the provider refused the grant (${code})`, code);
    throw new TokenEndpointError(
      response.status >= 500 ? "unreachable" : "malformed",
      `the provider's token endpoint answered HTTP ${response.status}`,
    );
  }
  if (!json || typeof json.access_token !== "string" || json.access_token === "")
    throw new TokenEndpointError("malformed", "the provider's token answer holds no access_token");
  const expiresIn = Number(json.expires_in);
  return {
    accessToken: json.access_token,
    tokenType: typeof json.token_type === "string" ? json.token_type : "bearer",
    refreshToken: typeof json.refresh_token === "string" && json.refresh_token !== "" ? json.refresh_token : undefined,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
    scopes: typeof json.scope === "string" ? json.scope.split(" ").filter(Boolean) : undefined,
    idToken: typeof json.id_token === "string" ? json.id_token : undefined,
  };
}

async function readLimited(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new Error("token answer too large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** application/x-www-form-urlencoded, as URLSearchParams writes it (a space is `+`). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
