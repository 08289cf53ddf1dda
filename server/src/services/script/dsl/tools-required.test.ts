import { describe, expect, it } from "vitest";
import { parseScript } from "./parse-script.js";
import { toolsRequired } from "./tools-required.js";

const source = (...steps: string[]) => ["dsl: script/1", "steps:", ...steps].join("\n");

describe("toolsRequired", () => {
  it("lists every execute tool, nested at any depth, sorted, each once", () => {
    const document = parseScript(
      source(
        "  - {id: a, execute: {tool: zeta.run}}",
        "  - id: loop",
        "    iterate:",
        "      over: '[1]'",
        "      steps:",
        "        - {id: b, execute: {tool: alpha.get}}",
        "        - id: p",
        "          parallel:",
        "            branches:",
        "              - {name: x, steps: [{id: c, execute: {tool: zeta.run}}]}",
        "              - {name: y, steps: [{id: d, execute: {tool: Beta.put}}]}",
        "  - {id: e, yield: {value: 1}}",
      ),
    );
    expect(toolsRequired(document)).toEqual(["Beta.put", "alpha.get", "zeta.run"]);
  });

  it("adds llm.complete for a decide with strategy llm, and tools of branches that may not run", () => {
    const document = parseScript(
      source(
        "  - id: d",
        "    decide:",
        "      strategy: llm",
        "      prompt: Which?",
        "      branches:",
        "        - {name: x, steps: [{id: a, execute: {tool: crm.update}}]}",
        "        - {name: y, default: true}",
      ),
    );
    expect(toolsRequired(document)).toEqual(["crm.update", "llm.complete"]);
  });

  it("needs nothing for a rule decide or a script without execute steps", () => {
    const document = parseScript(
      source("  - {id: d, decide: {branches: [{name: x, default: true, steps: [{id: w, wait: {for: 1s}}]}]}}"),
    );
    expect(toolsRequired(document)).toEqual([]);
  });

  it("lists llm.complete once when a script also calls it directly", () => {
    const document = parseScript(
      source(
        "  - {id: a, execute: {tool: llm.complete, input: {prompt: hi}}}",
        "  - {id: d, decide: {strategy: llm, prompt: Which?, branches: [{name: x, default: true}]}}",
      ),
    );
    expect(toolsRequired(document)).toEqual(["llm.complete"]);
  });
});
