import { describe, expect, it } from "vitest";
import { isGreen, rollUpChecks, type RolledUpCheck } from "./check-rollup.js";

const done = (conclusion: RolledUpCheck["conclusion"]): RolledUpCheck => ({ status: "completed", conclusion });

describe("check rollup", () => {
  it("answers none without checks, and none is not green", () => {
    expect(rollUpChecks([])).toBe("none");
    expect(isGreen("none")).toBe(false);
  });

  it("ranks failure > timed_out > cancelled > action_required > pending > neutral > skipped > success", () => {
    const ladder: RolledUpCheck[] = [
      done("success"),
      done("skipped"),
      done("neutral"),
      { status: "in_progress", conclusion: null },
      done("action_required"),
      done("cancelled"),
      done("timed_out"),
      done("failure"),
    ];
    const expected = [
      "success",
      "skipped",
      "neutral",
      "pending",
      "action_required",
      "cancelled",
      "timed_out",
      "failure",
    ];
    ladder.forEach((_, index) => {
      // Shuffle the better ones after the worst so the answer never depends on order.
      const subset = ladder.slice(0, index + 1).reverse();
      expect(rollUpChecks(subset)).toBe(expected[index]);
    });
  });

  it("counts queued and running checks as pending whatever their conclusion field says", () => {
    expect(rollUpChecks([done("success"), { status: "queued", conclusion: null }])).toBe("pending");
    expect(rollUpChecks([{ status: "in_progress", conclusion: "success" }])).toBe("pending");
    expect(isGreen("pending")).toBe(false);
  });

  it("treats success, neutral and skipped as green, the rest not", () => {
    expect(isGreen(rollUpChecks([done("success"), done("skipped"), done("neutral")]))).toBe(true);
    expect(isGreen(rollUpChecks([done(null)]))).toBe(true);
    expect(isGreen(rollUpChecks([done("success"), done("action_required")]))).toBe(false);
  });
});
