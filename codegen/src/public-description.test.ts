import { describe, expect, it } from "vitest";
import { publicDescription } from "./public-description.js";

describe("publicDescription", () => {
  it("cuts the marker clause and keeps the rule after it", () => {
    expect(publicDescription("Lists scripts. Not shown in the specification; sorted by name ascending.")).toBe(
      "Lists scripts. Sorted by name ascending.",
    );
    expect(publicDescription("Returns one script. Not shown in the specification.")).toBe("Returns one script.");
  });

  it("cuts a leading or trailing source and keeps the behaviour", () => {
    expect(
      publicDescription("Page size. Not shown in the specification; following AIP-158, 0 means the default of 50."),
    ).toBe("Page size. 0 means the default of 50.");
    expect(
      publicDescription("Not shown in the specification; following Nango's token refresh. Refreshes the token."),
    ).toBe("Refreshes the token.");
    expect(
      publicDescription("Creates an app. The route is the app collection, as AIP-133 creates under the parent."),
    ).toBe("Creates an app. The route is the app collection.");
    expect(
      publicDescription(
        "Cancels. For finished threads we\nfollow Temporal: cancelling a FAILED thread is FAILED_PRECONDITION.",
      ),
    ).toBe("Cancels. For finished threads: cancelling a FAILED thread is FAILED_PRECONDITION.");
  });

  it("drops parentheticals and sentences about the specification", () => {
    expect(publicDescription("Creation time (the specification spells the field `createAt`).")).toBe("Creation time.");
    expect(publicDescription("Lifecycle. The specification shows COMPLETED only; the rest is ours.")).toBe(
      "Lifecycle. The rest is ours.",
    );
  });

  it("keeps list items and their names when their text goes", () => {
    const text =
      "States:\n- `A`: Ready.\n- `B`: Not shown in the specification; a state beyond A, following Zilliz Cloud's MODIFYING. Busy.";
    expect(publicDescription(text)).toBe("States:\n- `A`: Ready.\n- `B`: A state beyond A. Busy.");
  });

  it("leaves a description without such remarks alone", () => {
    const text = "Lists the threads; newest first.\n\n- `x`: one\n- `y`: two";
    expect(publicDescription(text)).toBe(text);
  });
});
