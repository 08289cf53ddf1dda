import { afterAll, describe, expect, it } from "vitest";
import { createCelWorkerPool } from "./cel-worker-pool.js";
import { createJsonTransformTool } from "./json-transform-tool.js";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonValue } from "./tool.js";

const celWorkers = createCelWorkerPool({ size: 2 });
afterAll(() => celWorkers.close());
const registry = createToolRegistry([createNativeToolSource({ celWorkers })]);
const transform = async (data: JsonValue, expression: string) =>
  ((await registry.invoke("org", "json.transform", { data, expression }, testContext())) as { result: JsonValue })
    .result;

describe("json.transform", () => {
  it("filters and maps lists", async () => {
    const data = {
      items: [
        { name: "a", price: 5 },
        { name: "b", price: 20 },
        { name: "c", price: 12.5 },
      ],
    };
    expect(await transform(data, "data.items.filter(i, i.price > 10.0).map(i, i.name)")).toEqual(["b", "c"]);
  });

  it("treats whole JSON numbers as ints and others as doubles (the number rule)", async () => {
    expect(await transform({ count: 3 }, "data.count + 1")).toBe(4);
    expect(await transform({ x: 1.5 }, "data.x * 2.0")).toBe(3);
    expect(await transform({ count: 3 }, "double(data.count) * 1.5")).toBe(4.5);
    expect((await toolError(transform({ count: 3 }, "data.count * 1.5"), "failed")).message).toMatch(
      /^json\.transform: evaluating the expression failed: .*overload/,
    );
  });

  it("builds objects, and takes any JSON value as data", async () => {
    expect(
      await transform({ first: "Ada", last: "Lovelace" }, "{'full': data.first + ' ' + data.last, 'n': size(data)}"),
    ).toEqual({ full: "Ada Lovelace", n: 2 });
    expect(await transform([1, 2, 3], "data.size()")).toBe(3);
    expect(await transform("text", "data.upperAscii()")).toBe("TEXT");
    expect(await transform(null, "data == null")).toBe(true);
  });

  it("offers the strings extension", async () => {
    expect(await transform({ csv: "a,b,c" }, "data.csv.split(',')")).toEqual(["a", "b", "c"]);
  });

  it("turns CEL-only values into JSON", async () => {
    expect(await transform({}, "b'hi'")).toBe("aGk=");
    expect(await transform({}, "timestamp('2026-01-02T03:04:05Z')")).toBe("2026-01-02T03:04:05Z");
    expect(await transform({}, "duration('90s')")).toBe("90s");
    expect(await transform({}, "type(1)")).toBe("int");
    expect(await transform({}, "{1: 'one', true: 'yes'}")).toEqual({ 1: "one", true: "yes" });
    expect(await transform({}, "7u")).toBe(7);
  });

  it("refuses numbers JSON cannot hold exactly", async () => {
    expect((await toolError(transform({}, "9007199254740993"), "failed")).message).toContain("beyond the ±2^53");
    expect((await toolError(transform({ x: 2.5 }, "[data.x / 0.0]"), "failed")).message).toBe(
      "json.transform: result[0] is Infinity, which JSON cannot hold",
    );
  });

  it("keeps a __proto__ key as data", async () => {
    expect(await transform(JSON.parse('{"__proto__": {"a": 1}}'), "data")).toEqual(
      JSON.parse('{"__proto__": {"a": 1}}'),
    );
  });

  it("reports a syntax error as invalid input and a missing key as a failure", async () => {
    expect((await toolError(transform({}, "data.a +"), "invalid_input")).message).toMatch(
      /^json\.transform: expression does not parse: /,
    );
    expect((await toolError(transform({ a: 1 }, "data.b"), "failed")).message).toContain("b");
  });

  it("stops a runaway expression at its limit, naming the tool and the limit", async () => {
    const tool = createJsonTransformTool({ workers: celWorkers, timeLimitMs: 250 });
    const limited = createToolRegistry([{ listTools: async () => [tool] }]);
    const data = Array.from({ length: 3000 }, (_, i) => i);
    const error = await toolError(
      limited.invoke("org", "json.transform", { data, expression: "data.all(x, data.all(y, y >= 0))" }, testContext()),
      "timeout",
    );
    expect(error.message).toBe(
      "json.transform: the expression did not finish within the limit of 250ms and was stopped",
    );
    expect(tool.runtime.memoryMiB).toBe(256);
    expect(tool.description).toContain("stopped after 250ms");
  });

  it("stops the evaluation when the step is cancelled", async () => {
    const controller = new AbortController();
    const data = Array.from({ length: 3000 }, (_, i) => i);
    const call = registry.invoke(
      "org",
      "json.transform",
      { data, expression: "data.all(x, data.all(y, y >= 0))" },
      testContext(controller.signal),
    );
    // Nothing outside the worker thread marks the start of an evaluation, so the abort comes on a
    // timer; the expression runs for seconds, so the abort lands while it runs.
    setTimeout(() => controller.abort(), 100);
    expect((await toolError(call, "cancelled")).message).toBe("json.transform was cancelled");
    expect(await transform({ n: 1 }, "data.n")).toBe(1);
  });
});
