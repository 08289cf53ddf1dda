import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry, MAX_PAGE_SIZE } from "./tool-registry.js";
import type { ToolSource } from "./tool-registry.js";
import type { JsonObject, JsonValue, Tool, ToolContext } from "./tool.js";

function fakeTool(
  name: string,
  invoke: (input: JsonObject, context: ToolContext) => Promise<JsonValue> = async (input) => input,
  timeoutMs = 0,
): Tool {
  return {
    name,
    version: "1",
    description: `the ${name} tool`,
    inputs: [{ name: "value", type: "string", required: false, defaultValue: "default", description: "" }],
    outputs: [],
    runtime: { entrypoint: name, language: "native", image: "", timeoutMs, memoryMiB: 0, gpu: "" },
    createdAtMs: 1,
    invoke,
  };
}

function source(...tools: Tool[]): ToolSource {
  return { listTools: async () => tools };
}

function numberedTools(count: number): Tool[] {
  return Array.from({ length: count }, (_, index) => fakeTool(`tool.${String(index).padStart(4, "0")}`));
}

async function allPages(registry: ReturnType<typeof createToolRegistry>, pageSize: number): Promise<string[][]> {
  const pages: string[][] = [];
  let pageToken = "";
  do {
    const page = await registry.list("org", { pageSize, pageToken });
    pages.push(page.tools.map((tool) => tool.name));
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return pages;
}

describe("listing", () => {
  it("merges the sources by name ascending; the earlier source wins a name", async () => {
    const native = fakeTool("http.request");
    const registry = createToolRegistry([
      source(fakeTool("text.split"), native),
      source(fakeTool("http.request"), fakeTool("compute_acme_x")),
    ]);
    const { tools, nextPageToken } = await registry.list("org", { pageSize: 0, pageToken: "" });
    expect(tools.map((tool) => tool.name)).toEqual(["compute_acme_x", "http.request", "text.split"]);
    expect(tools[1]).toBe(native);
    expect(nextPageToken).toBe("");
  });

  it("asks every source for the caller's organization", async () => {
    const asked: string[] = [];
    const registry = createToolRegistry([{ listTools: async (orgId) => (asked.push(orgId), []) }]);
    await registry.list("org-7", { pageSize: 0, pageToken: "" });
    expect(asked).toEqual(["org-7"]);
  });

  it("serves 50 by default and at most 500", async () => {
    const registry = createToolRegistry([source(...numberedTools(1200))]);
    expect((await registry.list("org", { pageSize: 0, pageToken: "" })).tools).toHaveLength(50);
    expect((await registry.list("org", { pageSize: 10_000, pageToken: "" })).tools).toHaveLength(MAX_PAGE_SIZE);
    expect((await allPages(registry, 10_000)).map((page) => page.length)).toEqual([500, 500, 200]);
  });

  it("walks every tool exactly once, in order, across pages", async () => {
    const registry = createToolRegistry([source(...numberedTools(23))]);
    const pages = await allPages(registry, 5);
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(numberedTools(23).map((tool) => tool.name));
  });

  it("ends without a token when the last page is exactly full", async () => {
    const registry = createToolRegistry([source(...numberedTools(10))]);
    expect((await allPages(registry, 5)).map((page) => page.length)).toEqual([5, 5]);
  });

  it("neither skips nor repeats when tools come and go between pages", async () => {
    let tools = numberedTools(6);
    const registry = createToolRegistry([{ listTools: async () => tools }]);
    const first = await registry.list("org", { pageSize: 3, pageToken: "" });
    expect(first.tools.map((tool) => tool.name)).toEqual(["tool.0000", "tool.0001", "tool.0002"]);
    // A served tool disappears and a new one sorts after the cursor: the next page starts right
    // after the last name served, as an offset-based token could not.
    tools = tools.filter((tool) => tool.name !== "tool.0001").concat(fakeTool("tool.0002a"));
    const second = await registry.list("org", { pageSize: 10, pageToken: first.nextPageToken });
    expect(second.tools.map((tool) => tool.name)).toEqual(["tool.0002a", "tool.0003", "tool.0004", "tool.0005"]);
  });

  it("refuses a negative page size and a token it did not issue", async () => {
    const registry = createToolRegistry([source(...numberedTools(3))]);
    for (const page of [
      { pageSize: -1, pageToken: "" },
      { pageSize: 1, pageToken: "garbage!" },
      { pageSize: 1, pageToken: Buffer.from("other:x").toString("base64url") },
    ]) {
      const error = await registry.list("org", page).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.InvalidArgument);
      expect((error as ConnectError).rawMessage).toMatch(/^page_(size|token)/);
    }
  });

  it("gets one tool by name", async () => {
    const registry = createToolRegistry([source(fakeTool("a.b"))]);
    expect((await registry.get("org", "a.b"))?.name).toBe("a.b");
    expect(await registry.get("org", "a.c")).toBeUndefined();
  });
});

describe("invoking", () => {
  it("checks the input and applies defaults before the tool sees it", async () => {
    const registry = createToolRegistry([source(fakeTool("echo"))]);
    expect(await registry.invoke("org", "echo", {}, testContext())).toEqual({ value: "default" });
    const error = await toolError(registry.invoke("org", "echo", { value: 1 }, testContext()), "invalid_input");
    expect(error.message).toBe('echo: input "value" must be a string, got number 1');
  });

  it("passes the context through with its own signal", async () => {
    let seen: ToolContext | undefined;
    const registry = createToolRegistry([source(fakeTool("spy", async (_input, context) => ((seen = context), null)))]);
    const context = testContext();
    await registry.invoke("org", "spy", {}, context);
    expect(seen?.idempotencyKey).toBe("thread-1:main/fetch[0]");
    expect(seen?.threadId).toBe("thread-1");
    expect(seen?.stepPath).toBe("main/fetch[0]");
    expect(seen?.signal).not.toBe(context.signal);
    await seen?.writeArtifact("a.txt", "text/plain", new Uint8Array([1]));
    expect(context.artifacts.get("a.txt")?.bytes).toEqual(new Uint8Array([1]));
  });

  it("fails an unknown tool with not_found", async () => {
    const registry = createToolRegistry([source()]);
    expect((await toolError(registry.invoke("org", "nope", {}, testContext()), "not_found")).message).toBe(
      'no tool is named "nope"',
    );
  });

  it("turns anything a tool throws into a failed ToolError", async () => {
    const registry = createToolRegistry([
      source(
        fakeTool("boom", async () => {
          throw new TypeError("kaput");
        }),
      ),
    ]);
    expect((await toolError(registry.invoke("org", "boom", {}, testContext()), "failed")).message).toBe("kaput");
  });

  it("aborts the tool's signal at the tool's timeout", async () => {
    let aborted = false;
    const waits = fakeTool(
      "waits",
      (_input, context) =>
        new Promise((_, reject) => {
          context.signal.addEventListener("abort", () => ((aborted = true), reject(new Error("stopped"))));
        }),
      50,
    );
    const registry = createToolRegistry([source(waits)]);
    const error = await toolError(registry.invoke("org", "waits", {}, testContext()), "timeout");
    expect(error.message).toBe("waits did not finish within its timeout of 50ms");
    expect(aborted).toBe(true);
  });

  it("fails at the timeout even when the tool ignores its signal", async () => {
    const stubborn = fakeTool("stubborn", () => new Promise(() => undefined));
    const registry = createToolRegistry([source(stubborn)], { defaultTimeoutMs: 40 });
    const started = Date.now();
    await toolError(registry.invoke("org", "stubborn", {}, testContext()), "timeout");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("reports the caller's abort as cancelled, before or during the call", async () => {
    const during = new AbortController();
    // The caller aborts once the tool runs.
    const registry = createToolRegistry([
      source(
        fakeTool(
          "slow",
          (_input, context) =>
            new Promise((_, reject) => {
              context.signal.addEventListener("abort", () => reject(context.signal.reason));
              during.abort();
            }),
        ),
      ),
    ]);
    const running = registry.invoke("org", "slow", {}, testContext(during.signal));
    expect((await toolError(running, "cancelled")).message).toBe("slow was cancelled");
    let called = false;
    const before = createToolRegistry([source(fakeTool("never", async () => ((called = true), null)))]);
    await toolError(before.invoke("org", "never", {}, testContext(AbortSignal.abort())), "cancelled");
    expect(called).toBe(false);
  });
});
