import { describe, expect, it } from "vitest";
import { OpenedValueMemo } from "./opened-value-memo.js";

const bytes = (...values: number[]) => new Uint8Array(values);

describe("the memo of opened values", () => {
  it("opens once per sealed value and associated data", () => {
    const memo = new OpenedValueMemo();
    let opened = 0;
    const open = () => `value ${++opened}`;
    expect(memo.open(bytes(1, 2, 3), "slot-a", open)).toBe("value 1");
    expect(memo.open(bytes(1, 2, 3), "slot-a", open)).toBe("value 1");
    // The same bytes under other associated data, and other bytes, are opened again.
    expect(memo.open(bytes(1, 2, 3), "slot-b", open)).toBe("value 2");
    expect(memo.open(bytes(1, 2, 4), "slot-a", open)).toBe("value 3");
    expect(opened).toBe(3);
  });

  it("remembers nothing that did not open", () => {
    const memo = new OpenedValueMemo();
    expect(() =>
      memo.open(bytes(9), "slot", () => {
        throw new Error("does not open");
      }),
    ).toThrow("does not open");
    expect(memo.open(bytes(9), "slot", () => "opened")).toBe("opened");
  });

  it("keeps the most recently used entries, and no large value", () => {
    const memo = new OpenedValueMemo(2, 4);
    let opened = 0;
    const open = () => String(++opened);
    memo.open(bytes(1), "s", open); // 1
    memo.open(bytes(2), "s", open); // 2
    memo.open(bytes(1), "s", open); // remembered; 2 is now the oldest
    memo.open(bytes(3), "s", open); // 3; evicts 2
    expect(memo.open(bytes(1), "s", open)).toBe("1");
    expect(memo.open(bytes(2), "s", open)).toBe("4");
    expect(memo.open(bytes(1, 2, 3, 4, 5), "s", open)).toBe("5");
    expect(memo.open(bytes(1, 2, 3, 4, 5), "s", open)).toBe("6");
  });
});
