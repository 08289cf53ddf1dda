import { describe, expect, it } from "vitest";
import { parseScript } from "./parse-script.js";
import { childLists, effectivePolicy, retryDelayMs } from "./script-document.js";
import type { RetryPolicy, Step } from "./script-document.js";

const document = parseScript(
  [
    "dsl: script/1",
    "defaults: {timeout: 2m, retry: {maxAttempts: 4, initial: 1s, max: 5s}}",
    "steps:",
    "  - {id: plain, execute: {tool: t}}",
    "  - {id: own, timeout: 10s, retry: {maxAttempts: 1}, execute: {tool: t}}",
    "  - {id: ask, decide: {strategy: llm, prompt: Which?, branches: [{name: x, default: true}]}}",
    "  - {id: rule, decide: {branches: [{name: x, default: true, steps: [{id: inner, yield: {value: 1}}]}]}}",
    "  - {id: loop, iterate: {over: '[1]', steps: [{id: body, yield: {value: 1}}]}}",
    "  - {id: bounded, timeout: 1h, parallel: {branches: [{name: a, steps: [{id: pa, wait: {for: 1s}}]}, {name: b, steps: [{id: pb, wait: {for: 2s}}]}]}}",
    "  - {id: pause, approval: {timeout: 1d}}",
  ].join("\n"),
);

function step(id: string): Step {
  const found = document.steps.find((each) => each.id === id);
  if (found === undefined) throw new Error(`no step ${id}`);
  return found;
}

describe("effectivePolicy", () => {
  const defaultRetry: RetryPolicy = { maxAttempts: 4, backoff: "exponential", initialMs: 1000, maxMs: 5000 };

  it.each<[string, { timeout?: number; retry?: RetryPolicy }]>([
    ["plain", { timeout: 120_000, retry: defaultRetry }],
    ["own", { timeout: 10_000, retry: { maxAttempts: 1, backoff: "exponential", initialMs: 1000, maxMs: 60_000 } }],
    ["ask", { timeout: 120_000, retry: defaultRetry }],
    ["rule", {}],
    ["loop", {}],
    ["bounded", { timeout: 3_600_000 }],
    ["pause", {}],
  ])("%s", (id, policy) => {
    expect(effectivePolicy(document, step(id))).toEqual(policy);
  });
});

describe("retryDelayMs", () => {
  it("doubles from initial up to max with exponential backoff", () => {
    const policy: RetryPolicy = { maxAttempts: 8, backoff: "exponential", initialMs: 1000, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(policy, attempt))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
  });

  it("waits initial every time with fixed backoff", () => {
    const policy: RetryPolicy = { maxAttempts: 3, backoff: "fixed", initialMs: 60_000, maxMs: 60_000 };
    expect([1, 2].map((attempt) => retryDelayMs(policy, attempt))).toEqual([60_000, 60_000]);
  });
});

describe("childLists", () => {
  it("gives branches and bodies, nothing for leaf primitives", () => {
    expect(childLists(step("rule")).map((list) => list.map((each) => each.id))).toEqual([["inner"]]);
    expect(childLists(step("loop")).map((list) => list.map((each) => each.id))).toEqual([["body"]]);
    expect(childLists(step("bounded")).map((list) => list.map((each) => each.id))).toEqual([["pa"], ["pb"]]);
    expect(childLists(step("plain"))).toEqual([]);
  });
});
