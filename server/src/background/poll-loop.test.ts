import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startPollLoop } from "./poll-loop.js";

/** Counts a loop's passes, and lets a test wait for the pass it expects rather than for a time. */
function passCounter() {
  let count = 0;
  const waiting: { count: number; resolve: () => void }[] = [];
  return {
    get count() {
      return count;
    },
    add(): number {
      count++;
      for (const waiter of waiting.filter((w) => w.count <= count)) waiter.resolve();
      return count;
    },
    reached(wanted: number): Promise<void> {
      return wanted <= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count: wanted, resolve }));
    },
  };
}

// The clock is faked: the poll interval passes when a test advances it, so "no pass before the
// poll" is decided by the clock and not by how long a test happened to wait.
beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the poll loop", () => {
  it("runs a pass at once, then waits for a wake-up or the poll", async () => {
    const passes = passCounter();
    const loop = startPollLoop(async () => void passes.add(), { pollMs: 60_000, onError: () => {} });
    await passes.reached(1);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(passes.count).toBe(1);
    loop.wake();
    await passes.reached(2);
    await vi.advanceTimersByTimeAsync(60_000);
    await passes.reached(3);
    await loop.stop();
  });

  it("keeps a wake-up that arrives during a pass", async () => {
    const passes = passCounter();
    const started = Date.now();
    let release: () => void = () => {};
    const loop = startPollLoop(
      async () => {
        if (passes.add() === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      { pollMs: 60_000, onError: () => {} },
    );
    await passes.reached(1);
    loop.wake();
    release();
    await passes.reached(2);
    expect(Date.now() - started).toBe(0); // the second pass came from the wake-up, not from the poll
    await loop.stop();
  });

  it("goes again at once while a pass reports more work, polls otherwise, and survives a throwing pass", async () => {
    const errors: unknown[] = [];
    let reported: () => void = () => {};
    const failed = new Promise<void>((resolve) => (reported = resolve));
    const passes = passCounter();
    const started = Date.now();
    const loop = startPollLoop(
      async () => {
        const pass = passes.add();
        if (pass === 4) throw new Error("boom");
        return pass < 4;
      },
      {
        pollMs: 30,
        onError: (error) => {
          errors.push(error);
          reported();
        },
      },
    );
    await failed;
    expect(passes.count).toBe(4);
    expect(Date.now() - started).toBe(0);
    expect(errors).toEqual([new Error("boom")]);
    await vi.advanceTimersByTimeAsync(29);
    expect(passes.count).toBe(4);
    await vi.advanceTimersByTimeAsync(1);
    await passes.reached(5);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(passes.count).toBe(5);
  });
});
