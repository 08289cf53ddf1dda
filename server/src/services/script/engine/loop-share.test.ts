import { beforeEach, describe, expect, it } from "vitest";
import { shareEventLoop, TURN_SLICE_MS } from "./loop-share.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Work that holds the event loop, as a step evaluating expressions does. */
function busy(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms) {
    // holding the loop on purpose
  }
}

describe("sharing the event loop between steps and requests", () => {
  beforeEach(async () => {
    await nextTurn();
    await nextTurn();
  });

  it("lets steps start at once while the turn is young", async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    await shareEventLoop();
    await shareEventLoop();
    await shareEventLoop();
    expect(turned).toBe(false);
  });

  it("makes the next step wait for a later turn once this one ran its share, so that what waited runs first", async () => {
    await shareEventLoop();
    busy(TURN_SLICE_MS + 2);
    let served = false;
    setImmediate(() => (served = true)); // a request that arrived meanwhile
    await shareEventLoop();
    expect(served).toBe(true);
  });

  it("lets one waiting step in per turn, the others waiting again behind it", async () => {
    await shareEventLoop();
    busy(TURN_SLICE_MS + 2);
    const order: string[] = [];
    const step = async (name: string) => {
      await shareEventLoop();
      order.push(name);
      busy(TURN_SLICE_MS + 2);
    };
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    await Promise.all([step("a"), step("b"), step("c")]);
    clearInterval(counting);
    expect(order).toEqual(["a", "b", "c"]);
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
