import { describe, expect, it } from "vitest";
import { startPollLoop } from "./poll-loop.js";

const tick = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the poll loop", () => {
  it("runs a pass at once, then waits for a wake-up rather than the (long) poll", async () => {
    let passes = 0;
    const loop = startPollLoop(async () => void passes++, { pollMs: 60_000, onError: () => {} });
    await tick();
    expect(passes).toBe(1);
    loop.wake();
    await tick();
    expect(passes).toBe(2);
    await loop.stop();
  });

  it("keeps a wake-up that arrives during a pass", async () => {
    let passes = 0;
    let release: () => void = () => {};
    const loop = startPollLoop(
      async () => {
        passes++;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      { pollMs: 60_000, onError: () => {} },
    );
    await tick();
    loop.wake();
    release();
    await tick();
    expect(passes).toBe(2);
    await loop.stop();
  });

  it("goes again at once while a pass reports more work, polls otherwise, and survives a throwing pass", async () => {
    const errors: unknown[] = [];
    let passes = 0;
    const loop = startPollLoop(
      async () => {
        passes++;
        if (passes === 4) throw new Error("boom");
        return passes < 4;
      },
      { pollMs: 30, onError: (error) => errors.push(error) },
    );
    await tick(10);
    expect(passes).toBe(4);
    expect(errors).toHaveLength(1);
    await tick(60);
    expect(passes).toBeGreaterThanOrEqual(5);
    await loop.stop();
    const after = passes;
    await tick(60);
    expect(passes).toBe(after);
  });
});
