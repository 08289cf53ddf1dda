import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { hasType } from "./tool-input.js";
import { toToolMessage } from "./tool-message.js";
import { createToolRegistry } from "./tool-registry.js";

describe("the native tool set", () => {
  it("lists the built-in tools by name", async () => {
    const { tools, nextPageToken } = await createToolRegistry([createNativeToolSource()]).list("org", {
      pageSize: 0,
      pageToken: "",
    });
    expect(tools.map((tool) => tool.name)).toEqual([
      "artifact.write",
      "csv.format",
      "embeddings.embed",
      "http.request",
      "json.transform",
      "list.rank",
      "llm.complete",
      "sleep",
      "table.profile",
      "template.render",
      "text.redact",
      "text.split",
    ]);
    expect(nextPageToken).toBe("");
  });

  it("declares native runtimes, typed parameters and defaults of their own type", async () => {
    for (const tool of await createNativeToolSource().listTools("org")) {
      // Only json.transform's workers have a memory limit of their own; the rest share the server's.
      expect(tool.runtime).toMatchObject({
        language: "native",
        image: "",
        gpu: "",
        memoryMiB: tool.name === "json.transform" ? 256 : 0,
      });
      expect(tool.runtime.timeoutMs).toBeGreaterThan(0);
      expect(tool.runtime.entrypoint).not.toBe("");
      expect(tool.description).not.toBe("");
      expect(tool.name).toMatch(/^[a-z]+(\.[a-z]+)*$/);
      for (const param of [...tool.inputs, ...tool.outputs]) {
        expect(param.description, `${tool.name}.${param.name}`).not.toBe("");
        if (param.defaultValue !== undefined) {
          expect(param.required, `${tool.name}.${param.name}`).toBe(false);
          expect(hasType(param.defaultValue, param.type), `${tool.name}.${param.name}`).toBe(true);
        }
      }
    }
  });

  it("converts every tool to the contract's message", async () => {
    const messages = (await createNativeToolSource().listTools("org")).map(toToolMessage);
    const http = messages.find((message) => message.name === "http.request");
    expect(http?.runtime?.timeout).toBe("5m30s");
    expect(http?.inputs.find((input) => input.name === "method")?.defaultValue?.kind).toEqual({
      case: "stringValue",
      value: "GET",
    });
    expect(messages.find((message) => message.name === "sleep")?.runtime?.timeout).toBe("1h1m");
    expect(messages.every((message) => message.toolId === `${message.name}@1`)).toBe(true);
  });
});
