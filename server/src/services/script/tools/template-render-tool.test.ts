import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const render = (input: JsonObject) => registry.invoke("org", "template.render", input, testContext());

describe("template.render", () => {
  it("renders the template from values", async () => {
    expect(await render({ template: "Dear {{ who.name }},", values: { who: { name: "Grace" } } })).toEqual({
      text: "Dear Grace,",
    });
    expect(await render({ template: "no tags" })).toEqual({ text: "no tags" });
  });

  it("fails with invalid_input naming the missing path", async () => {
    const error = await toolError(render({ template: "Dear {{ who.name }}", values: {} }), "invalid_input");
    expect(error.message).toBe(
      'template.render: {{ who.name }} at line 1, column 6: values has no "who" (it is an object)',
    );
  });
});
