import { describe, expect, it } from "vitest";
import { publicDescription } from "./public-description.js";

describe("publicDescription", () => {
  it("removes an internal span at the end of a sentence", () => {
    expect(publicDescription("Returns an app's metadata. (-- Not shown in the specification; AIP-131. --)")).toBe(
      "Returns an app's metadata.",
    );
    expect(publicDescription("Page size; 0 means 50 (-- as AIP-158 --).")).toBe("Page size; 0 means 50.");
  });

  it("leaves one space where a span sat between words, none at the start of a line", () => {
    expect(publicDescription("Creates an app (-- as AIP-133 --) under the organization.")).toBe(
      "Creates an app under the organization.",
    );
    expect(publicDescription("(-- Not shown in the specification. --) Refreshes the token.")).toBe(
      "Refreshes the token.",
    );
    expect(publicDescription("Cancels. (-- a --) Then (-- b --) stops.")).toBe("Cancels. Then stops.");
  });

  it("removes a span across lines and the lines it leaves empty", () => {
    const text =
      "Streams a build's log.\n(-- Not shown in the specification; the events\nfollow BuildKit's progress output. --)\nOne event per line.";
    expect(publicDescription(text)).toBe("Streams a build's log.\nOne event per line.");
    expect(publicDescription("Lists apps. (-- Not shown in\nthe specification. --) Newest first.")).toBe(
      "Lists apps. Newest first.",
    );
  });

  it("keeps paragraphs and list items around a removed span", () => {
    expect(
      publicDescription(
        "States:\n- `A`: Ready.\n- `B`: (-- Zilliz Cloud's MODIFYING. --) Busy.\n\n(-- Note. --)\n\nDone.",
      ),
    ).toBe("States:\n- `A`: Ready.\n- `B`: Busy.\n\nDone.");
  });

  it("leaves a description without internal spans alone", () => {
    const text = "Lists the threads; newest first (`--target` style flags).\n\n- `x`: one\n- `y`: two";
    expect(publicDescription(text)).toBe(text);
  });

  it("refuses a marker without its partner rather than publish the remark", () => {
    expect(() => publicDescription("Lists apps. (-- Not shown in the specification.")).toThrow(/unbalanced.*"\(--"/);
    expect(() => publicDescription("Lists apps. Not shown in the specification. --)")).toThrow(/unbalanced.*"--\)"/);
  });
});
