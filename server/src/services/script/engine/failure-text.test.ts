import { DrizzleQueryError } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ToolError, toToolError } from "../tools/tool-error.js";
import { describeFailure, failureLogFields } from "./failure-text.js";
import { StepFailure } from "./run-outcome.js";

const driverError = () =>
  Object.assign(new Error("invalid input syntax for type json"), {
    severity: "ERROR",
    code: "22P02",
    detail: 'Token "s3cret" is invalid.',
  });

describe("a failure's text", () => {
  it("is the message of a failure the script met", () => {
    expect(describeFailure(new StepFailure("export is still running", "3", "not_ready"))).toEqual({
      text: "export is still running",
    });
    // fetch fails with a TypeError; the tool says what happened in its own words.
    const unreachable = new ToolError(
      "unavailable",
      "http.request: GET http://127.0.0.1:9/ failed: connection refused",
      { cause: new TypeError("fetch failed") },
    );
    expect(describeFailure(unreachable)).toEqual({
      text: "http.request: GET http://127.0.0.1:9/ failed: connection refused",
    });
  });

  it("is a generic one for a database error, however deep, logged without parameters or quoted values", () => {
    const query = new DrizzleQueryError("insert into thread_artifacts values ($1, $2)", ["s3cret", 1], driverError());
    for (const error of [query, toToolError(query), driverError()]) {
      const failure = describeFailure(error);
      expect(failure.text).toBe("internal error");
      expect(JSON.stringify(failure)).not.toContain("s3cret");
    }
    expect(failureLogFields(toToolError(query))).toEqual({
      error: "internal error",
      cause: [
        { name: "DrizzleQueryError", query: "insert into thread_artifacts values ($1, $2)" },
        { name: "Error", code: "22P02", message: "invalid input syntax for type json" },
      ],
    });
  });

  it("is a generic one for a programming error nothing caught", () => {
    const failure = describeFailure(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(failure.text).toBe("internal error");
    expect(failure.internal).toMatchObject({
      cause: [{ name: "TypeError", message: "Cannot read properties of undefined (reading 'x')" }],
    });
  });

  it("shows a NUL as U+FFFD, since text columns cannot hold it", () => {
    expect(describeFailure(new Error("bad \u0000 byte")).text).toBe("bad \uFFFD byte");
    expect(failureLogFields("a\u0000")).toEqual({ error: "a\uFFFD" });
  });
});
