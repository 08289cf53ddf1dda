import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../config.js";
import { readLlmConfig } from "./llm-config.js";

describe("readLlmConfig", () => {
  it("is undefined when no base URL is set", () => {
    expect(readLlmConfig({})).toBeUndefined();
    expect(readLlmConfig({ PLATFORM_LLM_BASE_URL: "  ", PLATFORM_LLM_MODEL: "m" })).toBeUndefined();
  });

  it("reads the endpoint, dropping a trailing slash", () => {
    expect(
      readLlmConfig({
        PLATFORM_LLM_BASE_URL: "https://api.example.com/v1/",
        PLATFORM_LLM_API_KEY: "sk-1",
        PLATFORM_LLM_MODEL: "gpt-x",
      }),
    ).toEqual({
      baseUrl: "https://api.example.com/v1",
      apiKey: "sk-1",
      model: "gpt-x",
    });
  });

  it("leaves the key out when it is unset, for endpoints without auth", () => {
    expect(readLlmConfig({ PLATFORM_LLM_BASE_URL: "http://127.0.0.1:11434/v1", PLATFORM_LLM_MODEL: "llama3" })).toEqual(
      { baseUrl: "http://127.0.0.1:11434/v1", model: "llama3" },
    );
  });

  it.each([
    [
      { PLATFORM_LLM_BASE_URL: "api.example.com", PLATFORM_LLM_MODEL: "m" },
      /PLATFORM_LLM_BASE_URL must be an absolute http\(s\) URL/,
    ],
    [
      { PLATFORM_LLM_BASE_URL: "ftp://api.example.com", PLATFORM_LLM_MODEL: "m" },
      /PLATFORM_LLM_BASE_URL must use http or https/,
    ],
    [{ PLATFORM_LLM_BASE_URL: "https://x/v1?key=1", PLATFORM_LLM_MODEL: "m" }, /must not have a query or fragment/],
    [{ PLATFORM_LLM_BASE_URL: "https://x/v1" }, /PLATFORM_LLM_MODEL is required when PLATFORM_LLM_BASE_URL is set/],
  ])("refuses %j", (env, message) => {
    expect(() => readLlmConfig(env)).toThrow(ConfigError);
    expect(() => readLlmConfig(env)).toThrow(message);
  });
});
