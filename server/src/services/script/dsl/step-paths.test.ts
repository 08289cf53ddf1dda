import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseScript } from "./parse-script.js";
import { childPath, parentPath, parsePath, pathTemplate, stepAtPath, topLevelCount, walkSteps } from "./step-paths.js";

/** The worked example of docs/script-dsl.md, "Step paths". */
function workedExample(): string {
  const markdown = readFileSync(new URL("../../../../../docs/script-dsl.md", import.meta.url), "utf8");
  const match = /<!-- example: paths -->\n```yaml\n([\s\S]*?)```/.exec(markdown);
  if (match === null) throw new Error("the paths example is missing from docs/script-dsl.md");
  return match[1] as string;
}

describe("the worked example of the docs", () => {
  const document = parseScript(workedExample());

  it("gives every step the path of the table, parents included", () => {
    expect([...walkSteps(document)].map(({ step, path, parentPath: parent }) => [step.id, path, parent])).toEqual([
      ["fetch", "0", ""],
      ["route", "1", ""],
      ["page", "1.0.0", "1"],
      ["sign_off", "1.0.1", "1"],
      ["enqueue", "1.1.0", "1"],
      ["per_comment", "2", ""],
      ["classify", "2.*.0", "2"],
      ["check", "2.*.1", "2"],
      ["flag", "2.*.1.0.0", "2.*.1"],
      ["notify", "3", ""],
      ["send_email", "3.0.0", "3"],
      ["post_chat", "3.1.0", "3"],
    ]);
  });

  it("counts top-level steps for total_steps", () => {
    expect(topLevelCount(document)).toBe(4);
  });

  it("finds the step of a concrete path, with any iteration number", () => {
    expect(stepAtPath(document, "2.3.1.0.0")?.id).toBe("flag");
    expect(stepAtPath(document, "2.0.0")?.id).toBe("classify");
    expect(stepAtPath(document, "1.1.0")?.id).toBe("enqueue");
    expect(stepAtPath(document, "3")?.id).toBe("notify");
    expect(pathTemplate(document, "2.3.1.0.0")).toBe("2.*.1.0.0");
    expect(pathTemplate(document, "1.0.1")).toBe("1.0.1");
  });

  it.each(["4", "1.2.0", "1.0.2", "0.0.0", "2.3.2", "2.3.1.1.0", "", "1.0", "01", "-1", "1..0", "1.0.0.0"])(
    "finds no step at %j",
    (path) => {
      expect(stepAtPath(document, path)).toBeUndefined();
      expect(pathTemplate(document, path)).toBeUndefined();
    },
  );

  it("builds the same paths the engine would for the fourth comment", () => {
    const check = childPath("2", 3, 1);
    expect(check).toBe("2.3.1");
    expect(childPath(check, 0, 0)).toBe("2.3.1.0.0");
    expect(parentPath("2.3.1.0.0")).toBe("2.3.1");
    expect(parentPath("2.3.1")).toBe("2");
    expect(parentPath("2")).toBe("");
  });

  it("points at every step of the document", () => {
    const pointers = Object.fromEntries([...walkSteps(document)].map(({ step, pointer }) => [step.id, pointer]));
    expect(pointers.flag).toBe("/steps/2/iterate/steps/1/decide/branches/0/steps/0");
    expect(pointers.post_chat).toBe("/steps/3/parallel/branches/1/steps/0");
  });

  it("keeps the paths when the document is parsed again (a resumed thread)", () => {
    const again = parseScript(workedExample());
    expect([...walkSteps(again)].map(({ path }) => path)).toEqual([...walkSteps(document)].map(({ path }) => path));
  });
});

describe("parsePath", () => {
  it.each<[string, number[] | undefined]>([
    ["0", [0]],
    ["12", [12]],
    ["1.0.2", [1, 0, 2]],
    ["2.10.1.0.0", [2, 10, 1, 0, 0]],
    ["1.0", undefined],
    ["1.0.2.3", undefined],
    ["01", undefined],
    ["1.a.2", undefined],
    ["", undefined],
    [" 1", undefined],
  ])("%j → %j", (path, numbers) => {
    expect(parsePath(path)).toEqual(numbers);
  });
});
