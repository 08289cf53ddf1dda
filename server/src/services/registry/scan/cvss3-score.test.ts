import { describe, expect, it } from "vitest";
import { cvss3BaseScore } from "./cvss3-score.js";
import { severityOfScore, severityOfWord } from "./vulnerability-severity.js";

describe("CVSS v3 base scores", () => {
  it.each([
    ["CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8],
    ["CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N", 5.9],
    ["CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N", 6.1],
    ["CVSS:3.0/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H", 7.8],
    ["CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", 10],
    ["CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N", 1.6],
    ["CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N", 0],
  ])("scores %s as %d", (vector, score) => {
    expect(cvss3BaseScore(vector)).toBe(score);
  });

  it("refuses other versions and incomplete vectors", () => {
    expect(cvss3BaseScore("CVSS:2.0/AV:N/AC:L/Au:N/C:P/I:P/A:P")).toBeUndefined();
    expect(cvss3BaseScore("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H")).toBeUndefined();
    expect(cvss3BaseScore("CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H")).toBeUndefined();
  });

  it("maps scores and rating words onto the report's severities", () => {
    expect([9.0, 8.9, 7.0, 6.9, 4.0, 3.9, 0.1, 0].map(severityOfScore)).toEqual([
      "Critical",
      "High",
      "High",
      "Medium",
      "Medium",
      "Low",
      "Low",
      "Negligible",
    ]);
    expect(["CRITICAL", "important", "Moderate", "low", "unimportant", "whatever"].map(severityOfWord)).toEqual([
      "Critical",
      "High",
      "Medium",
      "Low",
      "Negligible",
      undefined,
    ]);
  });
});
