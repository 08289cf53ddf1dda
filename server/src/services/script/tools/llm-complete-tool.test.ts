import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NOT_CONFIGURED } from "./llm-complete-tool.js";
import type { LlmConfig } from "./llm-config.js";
import { createNativeToolSource } from "./native-tools.js";
import { sendJson, startTestServer, testContext, toolError } from "./test-kit.js";
import type { ReceivedRequest, TestServer } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { ToolSource } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

let server: TestServer;
let llm: LlmConfig;
/** Requests of the "hang" command whose connection the client closed. */
let hangsClosed = 0;
/** Called, once each, when the endpoint receives the next "hang" request. */
const hangEntered: (() => void)[] = [];

function completion(content: string | null, model = "served-model"): JsonObject {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content },
        finish_reason: content === null ? "content_filter" : "stop",
      },
    ],
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  };
}

beforeAll(async () => {
  // A stand-in OpenAI-compatible endpoint; the last message's first word picks the answer.
  server = await startTestServer((received, response) => {
    if (received.url !== "/v1/chat/completions" || received.method !== "POST")
      return sendJson(response, 404, { error: { message: "no route" } });
    const body = JSON.parse(received.body) as { messages: { content: string }[] };
    const last = body.messages.at(-1)?.content ?? "";
    const [command] = last.split(" ");
    switch (command) {
      case "throttle":
        return sendJson(response, 429, { error: { message: "Rate limit reached", type: "rate_limit" } });
      case "crash":
        response.writeHead(502, { "content-type": "text/html" });
        return void response.end("<html>Bad Gateway</html>");
      case "badkey":
        return sendJson(response, 401, { error: { message: "Incorrect API key provided" } });
      case "hang":
        hangEntered.splice(0).forEach((entered) => entered());
        return void response.on("close", () => hangsClosed++); // never answers
      case "filtered":
        return sendJson(response, 200, completion(null));
      case "json":
        return sendJson(response, 200, completion('{"answer": 42, "items": ["a"]}'));
      case "fenced":
        return sendJson(response, 200, completion('```json\n{"answer": 42}\n```'));
      case "prose":
        return sendJson(response, 200, completion("Sure! The answer is 42."));
      default:
        return sendJson(response, 200, completion(`echo: ${last}`));
    }
  });
  llm = { baseUrl: `${server.url}/v1`, apiKey: "sk-test-123", model: "default-model" };
});

afterAll(() => server.close());

const registryWith = (config: LlmConfig | undefined) => createToolRegistry([createNativeToolSource({ llm: config })]);
const complete = (input: JsonObject, signal?: AbortSignal) =>
  registryWith(llm).invoke("org", "llm.complete", input, testContext(signal));
const lastRequest = (): ReceivedRequest => server.requests.at(-1) as ReceivedRequest;

describe("llm.complete", () => {
  it("posts a prompt to {baseUrl}/chat/completions with the bearer token and the step's idempotency key", async () => {
    const result = await complete({ prompt: "hello there" });
    expect(result).toEqual({
      text: "echo: hello there",
      model: "served-model",
      usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
    });
    const received = lastRequest();
    expect(received.headers.authorization).toBe("Bearer sk-test-123");
    expect(received.headers["content-type"]).toBe("application/json");
    expect(received.headers["idempotency-key"]).toBe("thread-1:main/fetch[0]");
    expect(JSON.parse(received.body)).toEqual({
      model: "default-model",
      messages: [{ role: "user", content: "hello there" }],
    });
  });

  it("sends messages, model, temperature, max tokens and the JSON response format", async () => {
    const messages = [
      { role: "system", content: "Answer in JSON." },
      { role: "user", content: "json please" },
    ];
    const result = await complete({
      messages,
      model: "big-model",
      temperature: 0.2,
      maxTokens: 64,
      responseFormat: "json",
    });
    expect(result).toMatchObject({ text: '{"answer": 42, "items": ["a"]}', json: { answer: 42, items: ["a"] } });
    expect(JSON.parse(lastRequest().body)).toEqual({
      model: "big-model",
      messages,
      temperature: 0.2,
      max_tokens: 64,
      response_format: { type: "json_object" },
    });
  });

  it("forgives a JSON answer wrapped in a code fence, and fails prose", async () => {
    expect(await complete({ prompt: "fenced", responseFormat: "json" })).toMatchObject({ json: { answer: 42 } });
    const error = await toolError(complete({ prompt: "prose", responseFormat: "json" }), "failed");
    expect(error.message).toBe(
      'llm.complete: responseFormat is "json" but the model\'s answer is not JSON: Sure! The answer is 42.',
    );
  });

  it("sends no authorization header when no key is configured", async () => {
    await registryWith({ baseUrl: llm.baseUrl, model: "m" }).invoke(
      "org",
      "llm.complete",
      { prompt: "hi" },
      testContext(),
    );
    expect(lastRequest().headers.authorization).toBeUndefined();
  });

  it("reports upstream throttling and server errors as unavailable with the status", async () => {
    const throttled = await toolError(complete({ prompt: "throttle" }), "unavailable");
    expect(throttled.message).toBe("llm.complete: the LLM endpoint answered 429: Rate limit reached");
    expect(throttled.upstreamStatus).toBe(429);
    expect(throttled.retryable).toBe(true);
    const crashed = await toolError(complete({ prompt: "crash" }), "unavailable");
    expect(crashed.message).toBe("llm.complete: the LLM endpoint answered 502: <html>Bad Gateway</html>");
    expect(crashed.upstreamStatus).toBe(502);
  });

  it("reports other refusals as failed with the upstream message", async () => {
    const error = await toolError(complete({ prompt: "badkey" }), "failed");
    expect(error.message).toBe("llm.complete: the LLM endpoint answered 401: Incorrect API key provided");
    expect(error.upstreamStatus).toBe(401);
    expect(error.retryable).toBe(false);
  });

  it("fails when the answer has no text", async () => {
    expect((await toolError(complete({ prompt: "filtered" }), "failed")).message).toBe(
      "llm.complete: the LLM endpoint returned no text (finish_reason content_filter)",
    );
  });

  it("fails every call with a clear message when no endpoint is configured", async () => {
    const error = await toolError(
      registryWith(undefined).invoke("org", "llm.complete", { prompt: "hi" }, testContext()),
      "failed",
    );
    expect(error.message).toBe(`llm.complete: ${NOT_CONFIGURED}`);
    expect(NOT_CONFIGURED).toBe(
      "no LLM endpoint is configured: set PLATFORM_LLM_BASE_URL (and PLATFORM_LLM_API_KEY, PLATFORM_LLM_MODEL)",
    );
  });

  it("reports an unreachable endpoint as unavailable", async () => {
    const closed = await startTestServer(() => undefined);
    await closed.close();
    const error = await toolError(
      registryWith({ baseUrl: closed.url, model: "m" }).invoke("org", "llm.complete", { prompt: "hi" }, testContext()),
      "unavailable",
    );
    expect(error.message).toMatch(
      /^llm\.complete: the LLM endpoint http:\/\/127\.0\.0\.1:\d+\/chat\/completions is unreachable: .*ECONNREFUSED/,
    );
  });

  it("gives up at the tool's timeout, closing the request", async () => {
    const [tool] = (await createNativeToolSource({ llm }).listTools("org")).filter(
      (each) => each.name === "llm.complete",
    );
    const quick: ToolSource = {
      listTools: async () => (tool === undefined ? [] : [{ ...tool, runtime: { ...tool.runtime, timeoutMs: 150 } }]),
    };
    const closedBefore = hangsClosed;
    const error = await toolError(
      createToolRegistry([quick]).invoke("org", "llm.complete", { prompt: "hang" }, testContext()),
      "timeout",
    );
    expect(error.message).toBe("llm.complete did not finish within its timeout of 150ms");
    await vi.waitFor(() => expect(hangsClosed).toBe(closedBefore + 1));
  });

  it("stops when the caller aborts", async () => {
    const controller = new AbortController();
    // Aborted once the endpoint has the request, so the call is cut in flight.
    hangEntered.push(() => controller.abort());
    await toolError(complete({ prompt: "hang" }, controller.signal), "cancelled");
  });

  it.each([
    [{}, "give exactly one of prompt and messages"],
    [{ prompt: "a", messages: [] }, "give exactly one of prompt and messages"],
    [{ messages: [] }, "messages must not be empty"],
    [{ messages: ["hi"] }, 'messages[0] must be an object {role, content}, got the string "hi"'],
    [
      { messages: [{ role: "robot", content: "x" }] },
      'messages[0].role must be "system", "user" or "assistant", got the string "robot"',
    ],
    [{ messages: [{ role: "user" }] }, "messages[0].content must be a string, got null"],
    [{ prompt: "a", temperature: 3 }, "temperature must be from 0 to 2, got 3"],
    [{ prompt: "a", maxTokens: 0 }, "maxTokens must be at least 1, got 0"],
    [{ prompt: "a", responseFormat: "xml" }, 'responseFormat must be "text" or "json", got the string "xml"'],
  ])("refuses %j", async (input: JsonObject, message) => {
    expect((await toolError(complete(input), "invalid_input")).message).toBe(`llm.complete: ${message}`);
  });
});
