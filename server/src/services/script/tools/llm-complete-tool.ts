import type { LlmConfig } from "./llm-config.js";
import { LLM_ENV } from "./llm-config.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { readCappedBody } from "./response-body.js";
import { invalidInput, ToolError } from "./tool-error.js";
import { describe, isJsonObject } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool, ToolContext } from "./tool.js";

export interface LlmCompleteToolOptions {
  readonly fetch?: typeof fetch;
  /** The operator's endpoint; undefined leaves the tool listed but failing with a clear message. */
  readonly llm?: LlmConfig | undefined;
}

const ROLES = new Set(["system", "user", "assistant"]);
const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

export const NOT_CONFIGURED = `no LLM endpoint is configured: set ${LLM_ENV.baseUrl} (and ${LLM_ENV.apiKey}, ${LLM_ENV.model})`;

/**
 * `llm.complete`: one chat completion from the OpenAI-compatible endpoint the operator configured
 * (`POST {baseUrl}/chat/completions`; OpenAI, Azure-style gateways, vLLM, Ollama, LiteLLM all
 * speak it). Throttling and server errors upstream (429, 5xx) and an unreachable endpoint are
 * `unavailable`, so the step's retry policy applies; other refusals (a bad key, an unknown model)
 * are `failed` with the upstream message.
 */
export function createLlmCompleteTool(options: LlmCompleteToolOptions = {}): Tool {
  const fetchFn = options.fetch ?? fetch;
  const llm = options.llm;
  return {
    name: "llm.complete",
    version: NATIVE_TOOL_VERSION,
    description:
      "Asks the operator-configured OpenAI-compatible model for a chat completion, from a prompt or a list of messages. " +
      'With responseFormat "json" the model is asked for a JSON object (mention JSON in the prompt) and the answer is parsed into `json`.',
    inputs: [
      { name: "prompt", type: "string", required: false, description: "the user message; give this or messages" },
      {
        name: "messages",
        type: "array",
        required: false,
        description: "chat messages {role: system | user | assistant, content: string}; give this or prompt",
      },
      {
        name: "model",
        type: "string",
        required: false,
        description: "model name; defaults to the operator's PLATFORM_LLM_MODEL",
      },
      { name: "temperature", type: "number", required: false, description: "sampling temperature, 0 to 2" },
      { name: "maxTokens", type: "integer", required: false, description: "most tokens to generate" },
      {
        name: "responseFormat",
        type: "string",
        required: false,
        defaultValue: "text",
        description: '"text" or "json"',
      },
    ],
    outputs: [
      { name: "text", type: "string", required: true, description: "the model's answer" },
      { name: "json", type: "", required: false, description: 'the answer parsed as JSON, with responseFormat "json"' },
      {
        name: "model",
        type: "string",
        required: true,
        description: "the model that answered, as the endpoint reports it",
      },
      {
        name: "usage",
        type: "object",
        required: true,
        description: "{promptTokens, completionTokens, totalTokens}; 0 when the endpoint does not report them",
      },
    ],
    runtime: nativeRuntime("llmComplete", 10 * 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input, context) {
      const request = completionRequest(input, llm?.model);
      if (llm === undefined) throw new ToolError("failed", `llm.complete: ${NOT_CONFIGURED}`);
      const answer = await postCompletion(fetchFn, llm, request, context);
      return completionResult(answer, request, input.responseFormat === "json");
    },
  };
}

/** The chat completions body, checked; the model is left empty for the not-configured error. */
function completionRequest(input: JsonObject, defaultModel: string | undefined): JsonObject {
  const hasPrompt = input.prompt !== undefined;
  const hasMessages = input.messages !== undefined;
  if (hasPrompt === hasMessages) throw invalidInput("llm.complete: give exactly one of prompt and messages");
  const messages = hasPrompt
    ? [{ role: "user", content: input.prompt as string }]
    : chatMessages(input.messages as JsonValue[]);
  const format = input.responseFormat;
  if (format !== "text" && format !== "json")
    throw invalidInput(`llm.complete: responseFormat must be "text" or "json", got ${describe(format)}`);
  const temperature = input.temperature;
  if (typeof temperature === "number" && (temperature < 0 || temperature > 2))
    throw invalidInput(`llm.complete: temperature must be from 0 to 2, got ${temperature}`);
  const maxTokens = input.maxTokens;
  if (typeof maxTokens === "number" && maxTokens < 1)
    throw invalidInput(`llm.complete: maxTokens must be at least 1, got ${maxTokens}`);
  const model =
    typeof input.model === "string" && input.model.trim() !== "" ? input.model.trim() : (defaultModel ?? "");
  const body: JsonObject = { model, messages };
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (format === "json") body.response_format = { type: "json_object" };
  return body;
}

function chatMessages(values: readonly JsonValue[]): JsonObject[] {
  if (values.length === 0) throw invalidInput("llm.complete: messages must not be empty");
  return values.map((value, index) => {
    const field = `messages[${index}]`;
    if (!isJsonObject(value))
      throw invalidInput(`llm.complete: ${field} must be an object {role, content}, got ${describe(value)}`);
    if (typeof value.role !== "string" || !ROLES.has(value.role))
      throw invalidInput(
        `llm.complete: ${field}.role must be "system", "user" or "assistant", got ${describe(value.role ?? null)}`,
      );
    if (typeof value.content !== "string")
      throw invalidInput(`llm.complete: ${field}.content must be a string, got ${describe(value.content ?? null)}`);
    return { role: value.role, content: value.content };
  });
}

async function postCompletion(
  fetchFn: typeof fetch,
  llm: LlmConfig,
  body: JsonObject,
  context: ToolContext,
): Promise<JsonObject> {
  const endpoint = `${llm.baseUrl}/chat/completions`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "idempotency-key": context.idempotencyKey,
  };
  if (llm.apiKey !== undefined) headers.authorization = `Bearer ${llm.apiKey}`;
  let status: number;
  let text: string;
  try {
    const response = await fetchFn(endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: context.signal,
    });
    status = response.status;
    text = new TextDecoder().decode(
      await readCappedBody(response, MAX_ANSWER_BYTES, `llm.complete: the answer of ${endpoint}`, context.memory),
    );
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (error instanceof ToolError) throw error;
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new ToolError("unavailable", `llm.complete: the LLM endpoint ${endpoint} is unreachable: ${reason}`, {
      cause: error,
    });
  }
  if (status < 200 || status > 299) {
    const reason = status === 429 || status >= 500 ? "unavailable" : "failed";
    throw new ToolError(reason, `llm.complete: the LLM endpoint answered ${status}: ${upstreamMessage(text)}`, {
      upstreamStatus: status,
    });
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new ToolError(
    "failed",
    `llm.complete: the LLM endpoint's answer is not a chat completion object: ${snippet(text)}`,
  );
}

function completionResult(answer: JsonObject, request: JsonObject, json: boolean): JsonObject {
  const choice = Array.isArray(answer.choices) ? answer.choices[0] : undefined;
  const message = isJsonObject(choice) ? choice.message : undefined;
  const content = isJsonObject(message) ? message.content : undefined;
  if (typeof content !== "string") {
    const finish =
      isJsonObject(choice) && typeof choice.finish_reason === "string"
        ? ` (finish_reason ${choice.finish_reason})`
        : "";
    throw new ToolError("failed", `llm.complete: the LLM endpoint returned no text${finish}`);
  }
  const usage = isJsonObject(answer.usage) ? answer.usage : {};
  const result: JsonObject = {
    text: content,
    model: typeof answer.model === "string" ? answer.model : (request.model as string),
    usage: {
      promptTokens: count(usage.prompt_tokens),
      completionTokens: count(usage.completion_tokens),
      totalTokens: count(usage.total_tokens),
    },
  };
  if (json) result.json = parseJsonAnswer(content);
  return result;
}

/** The answer as JSON; a model that wraps it in a Markdown code fence anyway is forgiven. */
function parseJsonAnswer(content: string): JsonValue {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(content);
  try {
    return JSON.parse(fenced?.[1] ?? content) as JsonValue;
  } catch {
    throw new ToolError(
      "failed",
      `llm.complete: responseFormat is "json" but the model's answer is not JSON: ${snippet(content)}`,
    );
  }
}

/** OpenAI's error body is `{"error": {"message": ...}}`; other servers send text. */
function upstreamMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) {
      const error = parsed.error;
      if (isJsonObject(error) && typeof error.message === "string") return error.message;
      if (typeof error === "string") return error;
    }
  } catch {
    // not JSON: show the text
  }
  return snippet(text);
}

function snippet(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return "(empty body)";
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}

function count(value: JsonValue | undefined): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
