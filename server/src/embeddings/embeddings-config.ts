import { ConfigError } from "../config-error.js";

/** The embedding and rerank endpoints the operator configured; absent parts fall back to the local embedder / no rerank. */
export interface EmbeddingsConfig {
  /** API root of an OpenAI-compatible embeddings endpoint, no trailing slash; `/embeddings` is added. */
  readonly baseUrl: string | undefined;
  /** Template model name (`nomic-embed-text-v1.5`) to the name the endpoint serves it under (`nomic-embed-text`). */
  readonly models: ReadonlyMap<string, string>;
  /** Sent as `authorization: Bearer <apiKey>` to both endpoints; absent for endpoints without auth. */
  readonly apiKey: string | undefined;
  /** Root of a TEI-shaped rerank endpoint, no trailing slash; `/rerank` is added. */
  readonly rerankUrl: string | undefined;
}

export const EMBEDDINGS_ENV = {
  url: "PLATFORM_EMBEDDINGS_URL",
  models: "PLATFORM_EMBEDDINGS_MODELS",
  apiKey: "PLATFORM_EMBEDDINGS_API_KEY",
  rerankUrl: "PLATFORM_RERANK_URL",
} as const;

export const NO_EMBEDDINGS: EmbeddingsConfig = {
  baseUrl: undefined,
  models: new Map(),
  apiKey: undefined,
  rerankUrl: undefined,
};

/**
 * Reads the endpoints from the server's environment (config.ts feeds flags through the same
 * names). PLATFORM_EMBEDDINGS_MODELS lists the template models the endpoint serves, comma-separated,
 * each optionally `=<name at the endpoint>`: `nomic-embed-text-v1.5=nomic-embed-text,bge-m3`. A URL
 * without models (or models without a URL) is refused: a model the endpoint does not serve would
 * otherwise fail every ingest instead of using the local embedder.
 */
export function readEmbeddingsConfig(env: Readonly<Record<string, string | undefined>>): EmbeddingsConfig {
  const baseUrl = apiRoot(EMBEDDINGS_ENV.url, env[EMBEDDINGS_ENV.url]);
  const models = modelMap(env[EMBEDDINGS_ENV.models] ?? "");
  if (baseUrl !== undefined && models.size === 0)
    throw new ConfigError(
      `${EMBEDDINGS_ENV.models} is required when ${EMBEDDINGS_ENV.url} is set: list the template models the endpoint serves, such as nomic-embed-text-v1.5=nomic-embed-text`,
    );
  if (baseUrl === undefined && models.size > 0)
    throw new ConfigError(`${EMBEDDINGS_ENV.models} is set but ${EMBEDDINGS_ENV.url} is not`);
  const apiKey = env[EMBEDDINGS_ENV.apiKey]?.trim() ?? "";
  return {
    baseUrl,
    models,
    apiKey: apiKey === "" ? undefined : apiKey,
    rerankUrl: apiRoot(EMBEDDINGS_ENV.rerankUrl, env[EMBEDDINGS_ENV.rerankUrl]),
  };
}

function apiRoot(name: string, value: string | undefined): string | undefined {
  const text = value?.trim() ?? "";
  if (text === "") return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`${name} must use http or https, got ${JSON.stringify(text)}`);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "")
    throw new ConfigError(`${name} must have no query, fragment or credentials, got ${JSON.stringify(url.origin)}`);
  return text.replace(/\/+$/, "");
}

function modelMap(text: string): Map<string, string> {
  const models = new Map<string, string>();
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue;
    const [name = "", served, extra] = entry.split("=").map((part) => part.trim());
    if (name === "" || served === "" || extra !== undefined)
      throw new ConfigError(
        `${EMBEDDINGS_ENV.models}: "${entry.trim()}" is not <template model> or <template model>=<endpoint model>`,
      );
    if (models.has(name)) throw new ConfigError(`${EMBEDDINGS_ENV.models}: "${name}" is listed twice`);
    models.set(name, served ?? name);
  }
  return models;
}
