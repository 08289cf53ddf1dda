import { describe, expect, it } from "vitest";
import { DEFAULT_EXPRESSION_LIMITS } from "../dsl/cost-meter.js";
import { jsonSize } from "./json-size.js";
import { ThreadBudget, ThreadMemoryExceeded } from "./thread-budget.js";

const budget = (memoryBytes: number, concurrentIterations = 4) =>
  new ThreadBudget({ memoryBytes, concurrentIterations, expressions: DEFAULT_EXPRESSION_LIMITS });
const text = (length: number) => "x".repeat(length - 2); // its JSON is `length` bytes

function exceeded(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ThreadMemoryExceeded);
    return (error as Error).message;
  }
  throw new Error("the budget took it");
}

describe("the memory limit", () => {
  it("counts step outputs and refuses the one that does not fit, naming the step and the limit", () => {
    const memory = budget(1024 * 1024);
    memory.hold("0", "first", text(600 * 1024));
    expect(memory.bytes).toBe(600 * 1024);
    expect(exceeded(() => memory.hold("1", "second", text(500 * 1024)))).toBe(
      `step "second" (1) exceeded the thread's memory limit of 1 MiB: its output of 500.0 KiB on top of 600.0 KiB already held or being read by the thread`,
    );
    expect(memory.bytes).toBe(600 * 1024);
  });

  it("counts what a tool reads, replaces it with the step's output, and drops an earlier attempt's reads", () => {
    const memory = budget(1000);
    const first = memory.reads("0", "fetch");
    first.reserve(400);
    const retry = memory.reads("0", "fetch");
    expect(memory.bytes).toBe(0);
    retry.reserve(300);
    retry.reserve(300);
    expect(exceeded(() => retry.reserve(500))).toContain(
      `step "fetch" (0) exceeded the thread's memory limit of 1000 bytes: reading 500 bytes more on top of 600 bytes`,
    );
    memory.hold("0", "fetch", text(100));
    expect(memory.bytes).toBe(100);
  });

  it("keeps a finished list's result for its container until the container's output replaces it", () => {
    const memory = budget(10_000);
    const top = memory.list("");
    // Iteration 0 of the iterate step at 0: two steps, the last one its result.
    const iteration = memory.list("0");
    memory.hold("0.0.0", "big", text(3000));
    iteration.settle("0.0.0", text(3000));
    memory.hold("0.0.1", "small", text(100));
    iteration.settle("0.0.1", text(100));
    expect(memory.bytes).toBe(3100);
    iteration.close("0.0.1");
    expect(memory.bytes).toBe(100);
    // The iterate step's output (the list of results) replaces the results it holds.
    memory.hold("0", "loop", [text(100)]);
    top.settle("0", [text(100)]);
    expect(memory.bytes).toBe(jsonSize([text(100)], Infinity));
    top.close("0");
    expect(memory.bytes).toBe(jsonSize([text(100)], Infinity));
  });

  it("releases a list's outputs and results when it stops on a failure, and counts outputs replayed from an earlier run", () => {
    const memory = budget(10_000);
    const list = memory.list("4");
    list.settle("4.0.0", text(2000)); // completed in an earlier run: counted as it is bound again
    expect(memory.bytes).toBe(2000);
    memory.reads("4.0.1", "fetch").reserve(500);
    list.settle("4.0.1", null); // failed: its reads are released
    expect(memory.bytes).toBe(2000 + jsonSize(null, Infinity));
    list.close(undefined);
    expect(memory.bytes).toBe(0);
  });

  it("measures JSON about as long as its text, without writing it, and stops once past the bound", () => {
    const value = {
      id: "T-1042",
      items: [
        { n: 12, ok: true, note: null },
        { n: 3.5, ok: false, note: "déjà vu" },
      ],
      text: text(10_000),
    };
    const written = JSON.stringify(value).length;
    expect(jsonSize(value, Infinity)).toBeGreaterThanOrEqual(written);
    expect(jsonSize(value, Infinity)).toBeLessThan(written * 1.05);
    // A million strings of 7 bytes each: the walk stops at the list itself, past the bound.
    const partial = jsonSize(
      Array.from({ length: 1_000_000 }, () => "xxxx"),
      100,
    );
    expect(partial).toBeGreaterThan(100);
    expect(partial).toBeLessThan(2_000_000);
  });
});

describe("concurrent iterations", () => {
  it("lets each loop run one iteration, and others only while the thread has a free slot", async () => {
    const slots = budget(1_000, 2);
    const signal = new AbortController().signal;
    const releases = [
      await slots.iteration(true, signal),
      await slots.iteration(false, signal),
      await slots.iteration(false, signal),
    ];
    let third = false;
    const waiting = slots.iteration(false, signal).then((release) => ((third = true), release));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
    // A first lane never waits, even with every slot taken.
    (await slots.iteration(true, signal))();
    releases[1]!();
    const release = await waiting;
    expect(third).toBe(true);
    release();
    releases[2]!();
  });

  it("stops waiting when the run is aborted", async () => {
    const slots = budget(1_000, 1);
    const abort = new AbortController();
    await slots.iteration(false, abort.signal);
    const waiting = slots.iteration(false, abort.signal);
    abort.abort(new Error("lease lost"));
    await expect(waiting).rejects.toThrow("lease lost");
  });
});
