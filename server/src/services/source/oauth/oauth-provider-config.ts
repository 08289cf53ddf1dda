import { parseProviderName, providerWireName } from "../provider-names.js";
import type { ProviderName } from "../source-schema.js";

/**
 * The OAuth 2.0 clients the operator registered with providers, read from the JSON file named by
 * `--oauth-providers-file`. One member per provider, keyed by its name (`google_drive` or
 * `PROVIDER_GOOGLE_DRIVE`), with the provider's endpoints and the client's registration:
 *
 * ```json
 * {
 *   "google_drive": {
 *     "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
 *     "token_endpoint": "https://oauth2.googleapis.com/token",
 *     "client_id": "…", "client_secret": "…",
 *     "scopes": ["https://www.googleapis.com/auth/drive.readonly"],
 *     "redirect_uris": ["https://app.example.com/oauth/callback"],
 *     "token_endpoint_auth_method": "client_secret_post",
 *     "authorization_params": { "access_type": "offline", "prompt": "consent" }
 *   }
 * }
 * ```
 *
 * `scopes` are the defaults when a caller asks for none; `redirect_uris` are the only values
 * GetOAuthUrl accepts (the provider checks them too, but refusing early gives a clear error);
 * `token_endpoint_auth_method` is `client_secret_basic` (the default, RFC 6749's recommendation),
 * `client_secret_post` or `none` (a public client); `authorization_params` are added to the
 * authorization URL, for providers that issue refresh tokens only when asked.
 */
export interface OAuthProviderConfig {
  readonly provider: ProviderName;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  readonly scopes: readonly string[];
  readonly redirectUris: readonly string[];
  readonly tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  readonly authorizationParams: Readonly<Record<string, string>>;
}

export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none";
export type OAuthProviders = ReadonlyMap<ProviderName, OAuthProviderConfig>;

/** Providers whose sources connect without OAuth: a registration for them is a configuration mistake. */
const NOT_OAUTH: readonly ProviderName[] = ["internal", "amazon_s3", "web"];
const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ["client_secret_basic", "client_secret_post", "none"];
/** RFC 6749 section 3.3's scope-token. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** Parameters the flow itself sets: a configuration may not override them. */
const RESERVED_PARAMS = new Set([
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
]);

/** The registrations in a file's text; errors name the member at fault and never repeat a secret. */
export function parseOAuthProviders(text: string): OAuthProviders {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(document)) throw new Error("must be a JSON object with one member per provider");
  const providers = new Map<ProviderName, OAuthProviderConfig>();
  for (const [key, entry] of Object.entries(document)) {
    const provider = parseProviderName(key);
    if (!provider) throw new Error(`"${key}" is not a provider name (such as google_drive)`);
    if (NOT_OAUTH.includes(provider)) throw new Error(`${providerWireName(provider)} does not connect with OAuth`);
    if (providers.has(provider)) throw new Error(`${providerWireName(provider)} is configured twice`);
    providers.set(provider, parseEntry(provider, key, entry));
  }
  return providers;
}

function parseEntry(provider: ProviderName, key: string, entry: unknown): OAuthProviderConfig {
  if (!isObject(entry)) throw new Error(`"${key}" must be an object`);
  const at = (member: string) => `"${key}".${member}`;
  const text = (member: string, required: boolean): string | undefined => {
    const value = entry[member];
    if (value === undefined || value === "") {
      if (required) throw new Error(`${at(member)} is required`);
      return undefined;
    }
    if (typeof value !== "string") throw new Error(`${at(member)} must be a string`);
    return value;
  };
  const list = (member: string): string[] => {
    const value = entry[member] ?? [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string"))
      throw new Error(`${at(member)} must be a list of strings`);
    return value as string[];
  };
  const known = [
    "authorization_endpoint",
    "token_endpoint",
    "client_id",
    "client_secret",
    "scopes",
    "redirect_uris",
    "token_endpoint_auth_method",
    "authorization_params",
  ];
  for (const member of Object.keys(entry))
    if (!known.includes(member)) throw new Error(`${at(member)} is not a known member (${known.join(", ")})`);

  const authorizationEndpoint = endpoint(text("authorization_endpoint", true)!, at("authorization_endpoint"));
  const tokenEndpoint = endpoint(text("token_endpoint", true)!, at("token_endpoint"));
  const clientId = text("client_id", true)!;
  const clientSecret = text("client_secret", false);
  const method = (text("token_endpoint_auth_method", false) ?? "client_secret_basic") as TokenEndpointAuthMethod;
  if (!AUTH_METHODS.includes(method))
    throw new Error(`${at("token_endpoint_auth_method")} must be one of ${AUTH_METHODS.join(", ")}`);
  if (method !== "none" && clientSecret === undefined)
    throw new Error(`${at("client_secret")} is required with token_endpoint_auth_method ${method}`);
  const scopes = list("scopes");
  for (const scope of scopes) if (!SCOPE_TOKEN.test(scope)) throw new Error(`${at("scopes")} holds an invalid scope`);
  const redirectUris = list("redirect_uris");
  if (redirectUris.length === 0) throw new Error(`${at("redirect_uris")} must list at least one URI`);
  for (const uri of redirectUris) redirectUri(uri, at("redirect_uris"));
  const params = entry.authorization_params ?? {};
  if (!isObject(params) || Object.values(params).some((value) => typeof value !== "string"))
    throw new Error(`${at("authorization_params")} must be an object of strings`);
  for (const name of Object.keys(params))
    if (RESERVED_PARAMS.has(name)) throw new Error(`${at("authorization_params")} may not set ${name}`);
  return {
    provider,
    authorizationEndpoint,
    tokenEndpoint,
    clientId,
    clientSecret,
    scopes,
    redirectUris,
    tokenEndpointAuthMethod: method,
    authorizationParams: params as Record<string, string>,
  };
}

function endpoint(text: string, where: string): string {
  const url = parseUrl(text, where);
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`${where} must be an http(s) URL`);
  if (url.hash !== "") throw new Error(`${where} must have no fragment`);
  return text;
}

/** RFC 8252 and OAuth 2.1: https, except for a loopback redirect during development. */
function redirectUri(text: string, where: string): void {
  const url = parseUrl(text, where);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    throw new Error(`${where}: ${text} must be https (http only for localhost)`);
  if (url.hash !== "") throw new Error(`${where}: ${text} must have no fragment`);
}

function parseUrl(text: string, where: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new Error(`${where} must be an absolute URL`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
