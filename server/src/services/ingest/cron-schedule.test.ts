import { describe, expect, it } from "vitest";
import { CronSyntaxError, nextCronTime } from "./cron-schedule.js";

const at = (iso: string) => Date.parse(iso);
const next = (cron: string, after: string) => new Date(nextCronTime(cron, at(after))).toISOString();

describe("five-field cron schedules", () => {
  it("find the next matching minute, strictly after the given time, in UTC", () => {
    expect(next("*/15 * * * *", "2026-01-01T10:07:30Z")).toBe("2026-01-01T10:15:00.000Z");
    expect(next("0 3 * * *", "2026-01-01T03:00:00Z")).toBe("2026-01-02T03:00:00.000Z");
    expect(next("30 9 * * 1-5", "2026-11-27T10:00:00Z")).toBe("2026-11-30T09:30:00.000Z"); // Friday to Monday
    expect(next("0 0 29 2 *", "2026-03-01T00:00:00Z")).toBe("2028-02-29T00:00:00.000Z");
    expect(next("0 12 1,15 * *", "2026-05-02T00:00:00Z")).toBe("2026-05-15T12:00:00.000Z");
  });

  it("run on either restricted day field, as Vixie cron does", () => {
    // The 13th of a month, or a Friday: Friday 4 December 2026 comes first.
    expect(next("0 0 13 * 5", "2026-12-01T00:00:00Z")).toBe("2026-12-04T00:00:00.000Z");
  });

  it("refuse what is not a five-field expression within range", () => {
    for (const bad of ["* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "a * * * *", "5-1 * * * *", "*/0 * * * *"]) {
      expect(() => nextCronTime(bad, 0), bad).toThrow(CronSyntaxError);
    }
  });
});
