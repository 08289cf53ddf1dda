import { ConfigError } from "../../../config-error.js";

/** An OpenAI-compatible chat completions endpoint the operator configured for `llm.complete`. */
export interface LlmConfig {
  /** API root without a trailing slash, such as `https://api.openai.com/v1`; `/chat/completions` is added. */
  readonly baseUrl: string;
  /** Sent as `authorization: Bearer <apiKey>`; absent for endpoints without auth (a local Ollama, vLLM). */
  readonly apiKey?: string;
  /** Model used when a call names none. */
  readonly model: string;
}

export const LLM_ENV = {
  baseUrl: "PLATFORM_LLM_BASE_URL",
  apiKey: "PLATFORM_LLM_API_KEY",
  model: "PLATFORM_LLM_MODEL",
} as const;

/**
 * Reads the LLM endpoint from the server's environment: undefined when PLATFORM_LLM_BASE_URL is
 * unset or empty (the tool then fails its calls with a message saying what to set). A set base URL
 * must be an absolute http(s) URL, and PLATFORM_LLM_MODEL is then required: there is no model name
 * every compatible server knows, so a default would be wrong somewhere.
 */
export function readLlmConfig(env: Readonly<Record<string, string | undefined>>): LlmConfig | undefined {
  const baseUrl = env[LLM_ENV.baseUrl]?.trim() ?? "";
  if (baseUrl === "") return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(
      `${LLM_ENV.baseUrl} must be an absolute http(s) URL such as https://api.openai.com/v1, got ${JSON.stringify(baseUrl)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${LLM_ENV.baseUrl} must use http or https, got ${JSON.stringify(baseUrl)}`);
  }
  if (url.search !== "" || url.hash !== "")
    throw new ConfigError(`${LLM_ENV.baseUrl} must not have a query or fragment, got ${JSON.stringify(baseUrl)}`);
  const model = env[LLM_ENV.model]?.trim() ?? "";
  if (model === "") throw new ConfigError(`${LLM_ENV.model} is required when ${LLM_ENV.baseUrl} is set`);
  const apiKey = env[LLM_ENV.apiKey]?.trim() ?? "";
  return { baseUrl: baseUrl.replace(/\/+$/, ""), model, ...(apiKey === "" ? {} : { apiKey }) };
}
