import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";

const registry = createToolRegistry([createNativeToolSource()]);
const sleep = (duration: string, signal?: AbortSignal) =>
  registry.invoke("org", "sleep", { duration }, testContext(signal));

describe("sleep", () => {
  it("sleeps for the duration", async () => {
    const { sleptMs } = (await sleep("60ms")) as { sleptMs: number };
    expect(sleptMs).toBeGreaterThanOrEqual(55);
    expect(sleptMs).toBeLessThan(1000);
    expect(await sleep("0s")).toMatchObject({ sleptMs: expect.any(Number) });
  });

  it("stops at once when the caller aborts", async () => {
    const controller = new AbortController();
    const started = Date.now();
    // The hour-long sleep sets no mark when it starts; an abort at any time before it would end
    // must stop it at once, which is what is measured.
    setTimeout(() => controller.abort(), 30);
    await toolError(sleep("1h", controller.signal), "cancelled");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("refuses durations it cannot read or over an hour", async () => {
    expect((await toolError(sleep("2 seconds"), "invalid_input")).message).toBe(
      'sleep: duration "2 seconds" is not a duration such as 2s, 5m or 1h',
    );
    expect((await toolError(sleep("61m"), "invalid_input")).message).toBe(
      "sleep: duration 61m is longer than the maximum of 1h",
    );
    expect((await toolError(sleep("1h1ms"), "invalid_input")).message).toContain("longer than the maximum of 1h");
  });
});
