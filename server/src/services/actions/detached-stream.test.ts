import { describe, expect, it } from "vitest";
import { detached } from "./detached-stream.js";

describe("a detached stream", () => {
  it("relays every item of its source, in order", async () => {
    async function* numbers() {
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        yield i;
      }
    }
    const seen: number[] = [];
    for await (const n of detached(numbers())) seen.push(n);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it("runs its source to the end when the reader stops early", async () => {
    let finished = false;
    async function* run() {
      yield "started";
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield "completed";
      finished = true;
    }
    for await (const item of detached(run())) {
      expect(item).toBe("started");
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(finished).toBe(true);
  });

  it("passes on what its source threw", async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw new Error("broken");
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const n of detached(failing())) seen.push(n);
      })(),
    ).rejects.toThrow("broken");
    expect(seen).toEqual([1]);
  });
});
