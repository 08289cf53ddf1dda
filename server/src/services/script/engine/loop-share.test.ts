import { beforeEach, describe, expect, it } from "vitest";
import { shareEventLoop } from "./loop-share.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Work that holds the event loop, as a step evaluating expressions does. */
function busy(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms) {
    // holding the loop on purpose
  }
}

describe("sharing the event loop between threads and requests", () => {
  beforeEach(async () => {
    await nextTurn();
    await nextTurn();
  });

  it("lets the first piece of thread work of a turn start at once", async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    await shareEventLoop();
    expect(turned).toBe(false);
  });

  it("makes further work wait for a later turn, after what arrived meanwhile", async () => {
    await shareEventLoop();
    let served = false;
    setImmediate(() => (served = true)); // a request that arrived meanwhile
    await shareEventLoop();
    expect(served).toBe(true);
  });

  it("lets one waiting piece in per turn, in the order they came", async () => {
    await shareEventLoop();
    const order: string[] = [];
    let turns = 0;
    const piece = async (name: string) => {
      await shareEventLoop();
      order.push(`${name}@${turns}`);
      busy(3);
    };
    // A timer is due after each piece's 3 ms of work: it runs between two pieces only if they are in different turns.
    const counting = setInterval(() => turns++, 1);
    await Promise.all([piece("a"), piece("b"), piece("c")]);
    clearInterval(counting);
    expect(order.map((entry) => entry.split("@")[0])).toEqual(["a", "b", "c"]);
    const seen = order.map((entry) => Number(entry.split("@")[1]));
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect(seen[2]).toBeGreaterThan(seen[1]!);
  });
});
