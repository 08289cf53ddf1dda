import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CredentialTypeName, ProviderName } from "./source-schema.js";
import { providerWireName } from "./provider-names.js";

/**
 * What each kind of source accepts. Settings are snake_case keys of `config` (the contract's
 * example spells them so); an unknown key is refused rather than ignored, so a typo such as
 * `prefx` is an error instead of a source that reads the whole bucket.
 *
 * - PROVIDER_INTERNAL: `{}`. Created with the bucket; reads the bucket's own objects.
 * - PROVIDER_AMAZON_S3 (and S3-compatible stores): `bucket` (required), `region` (default
 *   `us-east-1`), `endpoint` (http(s) URL of an S3-compatible store; AWS when absent), `prefix`
 *   (only keys under it), `force_path_style` (bool; default true with an endpoint, else false).
 *   Needs an ACCESS_KEY credential of PROVIDER_AMAZON_S3.
 * - PROVIDER_WEB: `urls`, 1 to 1000 distinct http(s) URLs without user info; each URL is an
 *   object key. No credential.
 * Other providers have no connector yet: creating one of their sources is UNIMPLEMENTED.
 */
export interface SourceKind {
  /** Credential types the kind connects with; empty when it takes none. */
  readonly credentialTypes: readonly CredentialTypeName[];
  /** The settings as stored, or INVALID_ARGUMENT naming the offending `config.<key>`. */
  parseConfig(config: JsonObject): JsonObject;
}

export const MAX_WEB_URLS = 1000;
const MAX_URL_LENGTH = 2048;
const MAX_TEXT = 1024;

const s3Kind: SourceKind = {
  credentialTypes: ["access_key"],
  parseConfig(config) {
    onlyKeys(config, "amazon_s3", ["bucket", "region", "endpoint", "prefix", "force_path_style"]);
    const bucket = text(config, "bucket", true);
    if (bucket.includes("/")) throw invalid("config.bucket must not contain '/': put a key prefix in config.prefix");
    const region = text(config, "region", false) || "us-east-1";
    if (!/^[a-z0-9-]{1,64}$/.test(region)) throw invalid("config.region must be a region name such as eu-west-1");
    const endpoint = text(config, "endpoint", false);
    if (endpoint !== "") httpUrl(endpoint, "config.endpoint");
    const prefix = text(config, "prefix", false);
    const pathStyle = config.force_path_style;
    if (pathStyle !== undefined && typeof pathStyle !== "boolean")
      throw invalid("config.force_path_style must be true or false");
    return {
      bucket,
      region,
      ...(endpoint ? { endpoint } : {}),
      prefix,
      // S3-compatible stores (MinIO, Ceph, most on-premises ones) answer path-style only.
      force_path_style: pathStyle ?? endpoint !== "",
    };
  },
};

const webKind: SourceKind = {
  credentialTypes: [],
  parseConfig(config) {
    onlyKeys(config, "web", ["urls"]);
    const urls = config.urls;
    if (urls === undefined || (Array.isArray(urls) && urls.length === 0))
      throw invalid("config.urls is required: a list of http(s) URLs");
    if (!Array.isArray(urls)) throw invalid("config.urls must be a list of http(s) URLs");
    if (urls.length > MAX_WEB_URLS) throw invalid(`config.urls holds ${urls.length} URLs, more than ${MAX_WEB_URLS}`);
    const seen = new Set<string>();
    urls.forEach((url: JsonValue, index) => {
      const field = `config.urls[${index}]`;
      if (typeof url !== "string") throw invalid(`${field} must be a string`);
      httpUrl(url, field);
      if (seen.has(url)) throw invalid(`${field} repeats an earlier URL`);
      seen.add(url);
    });
    return { urls };
  },
};

const internalKind: SourceKind = {
  credentialTypes: [],
  parseConfig(config) {
    onlyKeys(config, "internal", []);
    return {};
  },
};

const kinds: Partial<Record<ProviderName, SourceKind>> = {
  internal: internalKind,
  amazon_s3: s3Kind,
  web: webKind,
};

/** The kind of a provider, or UNIMPLEMENTED when this server has no connector for it. */
export function sourceKindOf(provider: ProviderName): SourceKind {
  const kind = kinds[provider];
  if (!kind)
    throw new ConnectError(`provider: ${providerWireName(provider)} sources are not supported yet`, Code.Unimplemented);
  return kind;
}

function onlyKeys(config: JsonObject, provider: ProviderName, allowed: readonly string[]): void {
  for (const key of Object.keys(config)) {
    if (!allowed.includes(key)) {
      const known = allowed.length ? ` (settings: ${allowed.join(", ")})` : " (it takes no settings)";
      throw invalid(`config.${key} is not a setting of ${providerWireName(provider)}${known}`);
    }
  }
}

function text(config: JsonObject, key: string, required: boolean): string {
  const value = config[key];
  if (value === undefined || value === null || value === "") {
    if (required) throw invalid(`config.${key} is required`);
    return "";
  }
  if (typeof value !== "string") throw invalid(`config.${key} must be a string`);
  if (value.length > MAX_TEXT) throw invalid(`config.${key} is longer than ${MAX_TEXT} characters`);
  return value;
}

/** An absolute http(s) URL; credentials in it are refused, since config is never secret. */
function httpUrl(text: string, field: string): URL {
  if (text.length > MAX_URL_LENGTH) throw invalid(`${field} is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid(`${field} must start with http:// or https://`);
  if (url.username !== "" || url.password !== "")
    throw invalid(`${field} must not hold a user name or password: store those as a credential`);
  return url;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
