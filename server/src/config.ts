import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { BlockList } from "node:net";
import { parseArgs } from "node:util";
import { parseBlobLocation, type BlobLocation } from "./blob/blob-location.js";
import { ConfigError } from "./config-error.js";
import { parseTrustedProxies } from "./net/client-address.js";
import { MAIL_ENV, readMailConfig, type MailConfig } from "./services/identity/mail-config.js";
import { DEFAULT_EXPRESSION_COST_LIMIT, DEFAULT_EXPRESSION_TIME_LIMIT_MS } from "./services/script/dsl/cost-meter.js";
import {
  DEFAULT_THREAD_CONCURRENT_ITERATIONS,
  DEFAULT_THREAD_MEMORY_BYTES,
  type ThreadLimits,
} from "./services/script/engine/thread-budget.js";
import { DEFAULT_ACTION_CONCURRENCY, DEFAULT_ACTION_ORG_CONCURRENCY } from "./services/actions/action-queue-worker.js";
import { LLM_ENV, readLlmConfig, type LlmConfig } from "./services/script/tools/llm-config.js";
import { parseOAuthProviders, type OAuthProviders } from "./services/source/oauth/oauth-provider-config.js";
import { EMBEDDINGS_ENV, readEmbeddingsConfig, type EmbeddingsConfig } from "./embeddings/embeddings-config.js";
import {
  DEFAULT_GC_GRACE_MS,
  DEFAULT_UPLOAD_EXPIRY_MS,
  GC_INTERVAL_MS,
} from "./services/registry/content/garbage-collector.js";
import { DEFAULT_ADVISORY_REFRESH_MS, DEFAULT_SCAN_CONCURRENCY } from "./services/registry/scan/scan-worker.js";

/** Everything `platform-server serve` can be told, from flags or their environment variables. */
export interface ServerConfig {
  readonly dataDir: string;
  readonly host: string;
  readonly ports: PlanePorts;
  /** PostgreSQL URL; absent means the embedded database in the data directory. */
  readonly databaseUrl: string | undefined;
  /** Origins allowed to call from a browser (`*` for any). */
  readonly corsOrigins: readonly string[];
  /** Largest request body accepted (streamed uploads excepted). */
  readonly maxBodyBytes: number;
  /** Base64 of the 32-byte key that seals secrets at rest; absent means `<dataDir>/secret.key`. */
  readonly secretKey: string | undefined;
  /** Time given to in-flight requests at shutdown. */
  readonly shutdownGraceMs: number;
  /** The OpenAI-compatible endpoint of the `llm.complete` tool; absent means the tool fails clearly. */
  readonly llm: LlmConfig | undefined;
  /** Embedding and rerank endpoints; models no endpoint serves use the local lexical embedder. */
  readonly embeddings: EmbeddingsConfig;
  /** How long a worker's claim on a thread holds without renewal: how soon a dead process's threads are resumed elsewhere. */
  readonly threadLeaseMs: number;
  /** Threads this process runs at once; a thread waiting (a wait step, a retry's backoff, an approval) takes no slot. */
  readonly threadConcurrency: number;
  /** What one thread may hold and spend: memory, concurrent iterations, expression cost and time. */
  readonly threadLimits: ThreadLimits;
  /** Queued action runs this process executes at once. */
  readonly actionConcurrency: number;
  /** Queued action runs of one organization executing at once across every process on the database. */
  readonly actionOrgConcurrency: number;
  /** Lets callback URLs and the http.request tool reach loopback, private and link-local hosts. */
  readonly allowPrivateNetwork: boolean;
  /** Reverse proxies whose X-Forwarded-For names the client (the address rate limits count); absent trusts none. */
  readonly trustedProxies: BlockList | undefined;
  /** Where objects (artifacts, buckets, image layers) are stored: --blob-url, else the --blob-dir folder. */
  readonly blob: BlobLocation;
  /** Base URL clients reach the api plane at, for the download links the server hands out; absent means the listener's own address. */
  readonly publicApiUrl: string | undefined;
  /** `{identity_url}`, the base of every pool's issuer (and of the links its e-mails carry); absent means the identity listener's own address. */
  readonly publicIdentityUrl: string | undefined;
  /** The SMTP server identity e-mails go through; absent means they are written to the log with their links. */
  readonly mail: MailConfig | undefined;
  /** OAuth clients registered with data-source providers, from --oauth-providers-file; empty turns OAuth connections off. */
  readonly oauthProviders: OAuthProviders;
  /** Folder of the action definitions (`<action_id>.json`); absent means the shipped server/actions. */
  readonly actionsDir: string | undefined;
  /** How long an action run's folder (`_actions/runs/...`) is kept unless its output was saved. */
  readonly actionRunRetentionMs: number;
  /** The registry scanner's OSV advisory folder, how often it is re-read, and images scanned at once; no folder means NoFeed. */
  readonly registryScan: {
    readonly advisoryDir: string | undefined;
    readonly advisoryRefreshMs: number;
    readonly concurrency: number;
  };
  /** The registry's garbage collection: grace before unused blobs go, upload expiry, sweep interval. */
  readonly registryGc: {
    readonly graceMs: number;
    readonly uploadExpiryMs: number;
    readonly intervalMs: number;
  };
}

export interface PlanePorts {
  readonly api: number;
  readonly data: number;
  readonly git: number;
  /** The git wire over SSH (the gateway's second listener). */
  readonly gitSsh: number;
  readonly registry: number;
  readonly identity: number;
  readonly s3: number;
}

/** One row of the configuration table: the README renders the same list. */
interface Setting {
  readonly flag: string;
  readonly env: string;
  readonly fallback: string;
  readonly help: string;
}

export const settings = {
  dataDir: {
    flag: "data-dir",
    env: "PLATFORM_DATA_DIR",
    fallback: "./.platform",
    help: "where the embedded database, keys and files live",
  },
  host: { flag: "host", env: "PLATFORM_HOST", fallback: "127.0.0.1", help: "address every listener binds" },
  apiPort: {
    flag: "api-port",
    env: "PLATFORM_API_PORT",
    fallback: "8080",
    help: "script, compute, secrets, builds, vector databases, IAM, identity admin (0 = any free port)",
  },
  dataPort: {
    flag: "data-port",
    env: "PLATFORM_DATA_PORT",
    fallback: "8081",
    help: "actions, pipelines, vector engine, search",
  },
  gitPort: { flag: "git-port", env: "PLATFORM_GIT_PORT", fallback: "8082", help: "git gateway" },
  gitSshPort: {
    flag: "git-ssh-port",
    env: "PLATFORM_GIT_SSH_PORT",
    fallback: "2222",
    help: "git gateway over SSH (0 = any free port)",
  },
  registryPort: { flag: "registry-port", env: "PLATFORM_REGISTRY_PORT", fallback: "8083", help: "container registry" },
  identityPort: {
    flag: "identity-port",
    env: "PLATFORM_IDENTITY_PORT",
    fallback: "8084",
    help: "identity pools (OIDC issuer)",
  },
  s3Port: {
    flag: "s3-port",
    env: "PLATFORM_S3_PORT",
    fallback: "8085",
    help: "S3-compatible object storage API (path-style, SigV4 with an API key's S3 credentials)",
  },
  corsOrigin: {
    flag: "cors-origin",
    env: "PLATFORM_CORS_ORIGINS",
    fallback: "",
    help: "browser origin allowed to call (repeatable; comma-separated in the env var; * for any)",
  },
  maxBodyBytes: {
    flag: "max-body-bytes",
    env: "PLATFORM_MAX_BODY_BYTES",
    fallback: String(16 * 1024 * 1024),
    help: "largest request body; 413 beyond it",
  },
  databaseUrl: {
    flag: "database-url",
    env: "DATABASE_URL",
    fallback: "",
    help: "PostgreSQL URL; empty uses the embedded database",
  },
  secretKey: {
    flag: "secret-key",
    env: "PLATFORM_SECRET_KEY",
    fallback: "",
    help: "base64 32-byte key sealing secrets; empty generates <data-dir>/secret.key",
  },
  shutdownGraceMs: {
    flag: "shutdown-grace-ms",
    env: "PLATFORM_SHUTDOWN_GRACE_MS",
    fallback: "10000",
    help: "time in-flight requests get on SIGTERM",
  },
  threadLeaseMs: {
    flag: "thread-lease-ms",
    env: "PLATFORM_THREAD_LEASE_MS",
    fallback: "30000",
    help: "claim on a running thread; a dead process's threads resume this long after it died",
  },
  actionsDir: {
    flag: "actions-dir",
    env: "PLATFORM_ACTIONS_DIR",
    fallback: "",
    help: "folder of the catalog's action definitions (<action_id>.json, each naming a template); empty uses the shipped server/actions",
  },
  actionRunRetentionMs: {
    flag: "action-run-retention-ms",
    env: "PLATFORM_ACTION_RUN_RETENTION_MS",
    fallback: "604800000",
    help: "how long an action run's manifest and output stay in its bucket unless the output was saved (7 days)",
  },
  threadConcurrency: {
    flag: "thread-concurrency",
    env: "PLATFORM_THREAD_CONCURRENCY",
    fallback: "8",
    help: "threads one process runs at once (from 1); a waiting thread takes no slot",
  },
  threadMemoryBytes: {
    flag: "thread-memory-bytes",
    env: "PLATFORM_THREAD_MEMORY_BYTES",
    fallback: String(DEFAULT_THREAD_MEMORY_BYTES),
    help: "step outputs a thread holds plus response bodies it is reading; the step that passes it fails",
  },
  threadConcurrentIterations: {
    flag: "thread-concurrent-iterations",
    env: "PLATFORM_THREAD_CONCURRENT_ITERATIONS",
    fallback: String(DEFAULT_THREAD_CONCURRENT_ITERATIONS),
    help: "iterations running at once in one thread across nested loops, beyond one per running loop",
  },
  expressionCostLimit: {
    flag: "expression-cost-limit",
    env: "PLATFORM_EXPRESSION_COST_LIMIT",
    fallback: String(DEFAULT_EXPRESSION_COST_LIMIT),
    help: "cost units one evaluation of a script's expressions may spend",
  },
  expressionTimeLimitMs: {
    flag: "expression-time-limit-ms",
    env: "PLATFORM_EXPRESSION_TIME_LIMIT_MS",
    fallback: String(DEFAULT_EXPRESSION_TIME_LIMIT_MS),
    help: "wall-clock ceiling of one evaluation of a script's expressions",
  },
  actionConcurrency: {
    flag: "action-concurrency",
    env: "PLATFORM_ACTION_CONCURRENCY",
    fallback: String(DEFAULT_ACTION_CONCURRENCY),
    help: "queued action runs one process executes at once (from 1)",
  },
  actionOrgConcurrency: {
    flag: "action-org-concurrency",
    env: "PLATFORM_ACTION_ORG_CONCURRENCY",
    fallback: String(DEFAULT_ACTION_ORG_CONCURRENCY),
    help: "queued action runs of one organization executing at once across every process (from 1)",
  },
  allowPrivateNetwork: {
    flag: "allow-private-network",
    env: "PLATFORM_ALLOW_PRIVATE_NETWORK",
    fallback: "false",
    help: "true lets callbacks and http.request reach loopback, private and link-local hosts (development only)",
  },
  trustedProxies: {
    flag: "trusted-proxies",
    env: "PLATFORM_TRUSTED_PROXIES",
    fallback: "",
    help: "addresses and CIDR ranges of reverse proxies whose X-Forwarded-For names the client, comma-separated (the identity plane's rate limits count that address); empty trusts none",
  },
  blobDir: {
    flag: "blob-dir",
    env: "PLATFORM_BLOB_DIR",
    fallback: "",
    help: "filesystem object store for artifacts; empty uses <data-dir>/blobs",
  },
  blobUrl: {
    flag: "blob-url",
    env: "PLATFORM_BLOB_URL",
    fallback: "",
    help: "object store: file:///path or s3://bucket/prefix?endpoint=...&region=...&forcePathStyle=true (credentials from the AWS_* variables); empty uses --blob-dir",
  },
  registryAdvisoryDir: {
    flag: "registry-advisory-dir",
    env: "PLATFORM_REGISTRY_ADVISORY_DIR",
    fallback: "",
    help: "folder of OSV advisory JSON records (any depth) the registry scans images against; empty records every scan as NoFeed",
  },
  registryAdvisoryRefreshMs: {
    flag: "registry-advisory-refresh-ms",
    env: "PLATFORM_REGISTRY_ADVISORY_REFRESH_MS",
    fallback: String(DEFAULT_ADVISORY_REFRESH_MS),
    help: "how often the advisory folder is read again; results from an older feed are then scanned again (1 hour)",
  },
  registryScanConcurrency: {
    flag: "registry-scan-concurrency",
    env: "PLATFORM_REGISTRY_SCAN_CONCURRENCY",
    fallback: String(DEFAULT_SCAN_CONCURRENCY),
    help: "images one process scans for vulnerabilities at once (from 1)",
  },
  registryGcGraceMs: {
    flag: "registry-gc-grace-ms",
    env: "PLATFORM_REGISTRY_GC_GRACE_MS",
    fallback: String(DEFAULT_GC_GRACE_MS),
    help: "age before a blob no manifest references is deleted, so a push in progress keeps its layers (1 day)",
  },
  registryUploadExpiryMs: {
    flag: "registry-upload-expiry-ms",
    env: "PLATFORM_REGISTRY_UPLOAD_EXPIRY_MS",
    fallback: String(DEFAULT_UPLOAD_EXPIRY_MS),
    help: "how long an untouched blob upload is kept before it is deleted with its parts (7 days)",
  },
  registryGcIntervalMs: {
    flag: "registry-gc-interval-ms",
    env: "PLATFORM_REGISTRY_GC_INTERVAL_MS",
    fallback: String(GC_INTERVAL_MS),
    help: "how often the registry's garbage collection runs (1 hour)",
  },
  publicApiUrl: {
    flag: "public-api-url",
    env: "PLATFORM_PUBLIC_API_URL",
    fallback: "",
    help: "URL clients reach the api plane at, used in download links; empty uses the listener's address",
  },
  publicIdentityUrl: {
    flag: "public-identity-url",
    env: "PLATFORM_PUBLIC_IDENTITY_URL",
    fallback: "",
    help: "URL clients reach the identity plane at: the base of every pool's issuer and of e-mailed links; empty uses the listener's address",
  },
  smtpUrl: {
    flag: "smtp-url",
    env: MAIL_ENV.smtpUrl,
    fallback: "",
    help: "SMTP server for identity e-mails (smtps://user:password@host:465 or smtp://…:587); empty writes them to the log",
  },
  mailFrom: {
    flag: "mail-from",
    env: MAIL_ENV.from,
    fallback: "",
    help: "From address of identity e-mails (required with the SMTP URL)",
  },
  llmBaseUrl: {
    flag: "llm-base-url",
    env: LLM_ENV.baseUrl,
    fallback: "",
    help: "OpenAI-compatible API root for the llm.complete tool (for example https://api.openai.com/v1)",
  },
  llmApiKey: { flag: "llm-api-key", env: LLM_ENV.apiKey, fallback: "", help: "bearer token for that API" },
  llmModel: {
    flag: "llm-model",
    env: LLM_ENV.model,
    fallback: "",
    help: "model used when a call names none (required with the base URL)",
  },
  oauthProvidersFile: {
    flag: "oauth-providers-file",
    env: "PLATFORM_OAUTH_PROVIDERS_FILE",
    fallback: "",
    help: "JSON file of the OAuth clients registered with data-source providers (endpoints, client id and secret, scopes, redirect URIs); empty turns OAuth connections off",
  },
  embeddingsUrl: {
    flag: "embeddings-url",
    env: EMBEDDINGS_ENV.url,
    fallback: "",
    help: "OpenAI-compatible API root serving embedding models (POST {url}/embeddings: OpenAI, vLLM, TEI, Ollama /v1); empty embeds with the local lexical embedder",
  },
  embeddingsModels: {
    flag: "embeddings-models",
    env: EMBEDDINGS_ENV.models,
    fallback: "",
    help: "template models that endpoint serves, comma-separated, each optionally =<name at the endpoint> (nomic-embed-text-v1.5=nomic-embed-text); required with the URL",
  },
  embeddingsApiKey: {
    flag: "embeddings-api-key",
    env: EMBEDDINGS_ENV.apiKey,
    fallback: "",
    help: "bearer token for the embeddings and rerank endpoints",
  },
  rerankUrl: {
    flag: "rerank-url",
    env: EMBEDDINGS_ENV.rerankUrl,
    fallback: "",
    help: "root of a TEI-shaped cross-encoder (POST {url}/rerank) for search rerank; empty skips rerank with a warning",
  },
} satisfies Record<string, Setting>;

export { ConfigError };

/** Reads `serve`'s flags, then their environment variables, then the defaults. */
export function parseServeConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ServerConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(
      Object.values(settings).map((s) => [s.flag, { type: "string" as const, multiple: s.flag === "cors-origin" }]),
    ),
    strict: true,
    allowPositionals: false,
  });
  const read = (setting: Setting): string => {
    const flag = values[setting.flag];
    if (Array.isArray(flag)) return flag.join(",");
    return (flag as string | undefined) ?? env[setting.env] ?? setting.fallback;
  };
  const integer = (setting: Setting, max: number): number => {
    const text = read(setting);
    const value = Number(text);
    if (!/^[0-9]+$/.test(text) || value > max)
      throw new ConfigError(`--${setting.flag} (${setting.env}) must be an integer from 0 to ${max}, got "${text}"`);
    return value;
  };
  const port = (setting: Setting) => integer(setting, 65535);
  const positive = (setting: Setting, max: number): number => {
    const value = integer(setting, max);
    if (value === 0) throw new ConfigError(`--${setting.flag} (${setting.env}) must be at least 1, got "0"`);
    return value;
  };
  const flag = (setting: Setting): boolean => {
    const text = read(setting).trim().toLowerCase();
    if (text === "true" || text === "1") return true;
    if (text === "false" || text === "0" || text === "") return false;
    throw new ConfigError(`--${setting.flag} (${setting.env}) must be true or false, got "${text}"`);
  };
  const dataDir = resolve(read(settings.dataDir));
  return {
    dataDir,
    host: read(settings.host),
    ports: {
      api: port(settings.apiPort),
      data: port(settings.dataPort),
      git: port(settings.gitPort),
      gitSsh: port(settings.gitSshPort),
      registry: port(settings.registryPort),
      identity: port(settings.identityPort),
      s3: port(settings.s3Port),
    },
    databaseUrl: read(settings.databaseUrl) || undefined,
    corsOrigins: read(settings.corsOrigin)
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean),
    maxBodyBytes: integer(settings.maxBodyBytes, Number.MAX_SAFE_INTEGER),
    secretKey: read(settings.secretKey) || undefined,
    shutdownGraceMs: integer(settings.shutdownGraceMs, 600_000),
    threadLeaseMs: Math.max(1_000, integer(settings.threadLeaseMs, 3_600_000)),
    threadConcurrency: positive(settings.threadConcurrency, 1_024),
    actionsDir: read(settings.actionsDir) ? resolve(read(settings.actionsDir)) : undefined,
    actionRunRetentionMs: positive(settings.actionRunRetentionMs, Number.MAX_SAFE_INTEGER),
    threadLimits: {
      memoryBytes: positive(settings.threadMemoryBytes, Number.MAX_SAFE_INTEGER),
      concurrentIterations: positive(settings.threadConcurrentIterations, 10_000),
      expressions: {
        cost: positive(settings.expressionCostLimit, Number.MAX_SAFE_INTEGER),
        timeMs: positive(settings.expressionTimeLimitMs, 3_600_000),
      },
    },
    actionConcurrency: positive(settings.actionConcurrency, 1_024),
    actionOrgConcurrency: positive(settings.actionOrgConcurrency, 1_024),
    allowPrivateNetwork: flag(settings.allowPrivateNetwork),
    trustedProxies: trustedProxies(settings.trustedProxies, read(settings.trustedProxies)),
    blob: blobLocation(settings.blobUrl, read(settings.blobUrl), read(settings.blobDir) || resolve(dataDir, "blobs")),
    registryScan: {
      advisoryDir: read(settings.registryAdvisoryDir) ? resolve(read(settings.registryAdvisoryDir)) : undefined,
      advisoryRefreshMs: positive(settings.registryAdvisoryRefreshMs, Number.MAX_SAFE_INTEGER),
      concurrency: positive(settings.registryScanConcurrency, 64),
    },
    registryGc: {
      graceMs: positive(settings.registryGcGraceMs, Number.MAX_SAFE_INTEGER),
      uploadExpiryMs: positive(settings.registryUploadExpiryMs, Number.MAX_SAFE_INTEGER),
      intervalMs: positive(settings.registryGcIntervalMs, Number.MAX_SAFE_INTEGER),
    },
    publicApiUrl: read(settings.publicApiUrl) || undefined,
    publicIdentityUrl: publicUrl(settings.publicIdentityUrl, read(settings.publicIdentityUrl)),
    mail: readMailConfig({ [MAIL_ENV.smtpUrl]: read(settings.smtpUrl), [MAIL_ENV.from]: read(settings.mailFrom) }),
    oauthProviders: oauthProviders(settings.oauthProvidersFile, read(settings.oauthProvidersFile)),
    llm: readLlmConfig({
      [LLM_ENV.baseUrl]: read(settings.llmBaseUrl),
      [LLM_ENV.apiKey]: read(settings.llmApiKey) || undefined,
      [LLM_ENV.model]: read(settings.llmModel) || undefined,
    }),
    embeddings: readEmbeddingsConfig({
      [EMBEDDINGS_ENV.url]: read(settings.embeddingsUrl),
      [EMBEDDINGS_ENV.models]: read(settings.embeddingsModels),
      [EMBEDDINGS_ENV.apiKey]: read(settings.embeddingsApiKey),
      [EMBEDDINGS_ENV.rerankUrl]: read(settings.rerankUrl),
    }),
  };
}

/** A public base URL setting: absolute http(s), kept without a trailing slash; empty means unset. */
function publicUrl(setting: Setting, text: string): string | undefined {
  if (text === "") return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`--${setting.flag} (${setting.env}) must be an absolute URL, got "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`--${setting.flag} (${setting.env}) must start with http:// or https://, got "${text}"`);
  return text.replace(/\/+$/, "");
}

/** The registrations in the file at `path`, checked now so that a mistake stops the start. */
function oauthProviders(setting: Setting, path: string): OAuthProviders {
  if (path === "") return new Map();
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`--${setting.flag} (${setting.env}): cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseOAuthProviders(text);
  } catch (error) {
    throw new ConfigError(`--${setting.flag} (${setting.env}): ${path} ${(error as Error).message}`);
  }
}

function blobLocation(setting: Setting, url: string, dir: string): BlobLocation {
  if (url === "") return { kind: "filesystem", dir: resolve(dir) };
  try {
    return parseBlobLocation(url);
  } catch (error) {
    throw new ConfigError(`--${setting.flag} (${setting.env}): ${(error as Error).message}`);
  }
}

function trustedProxies(setting: Setting, text: string): BlockList | undefined {
  try {
    return parseTrustedProxies(text);
  } catch (error) {
    throw new ConfigError(`--${setting.flag} (${setting.env}): ${(error as Error).message}`);
  }
}
