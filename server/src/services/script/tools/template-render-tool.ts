import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { renderTemplate, TemplateError } from "./template.js";
import { invalidInput } from "./tool-error.js";
import type { JsonObject, Tool } from "./tool.js";

/** `template.render`: fills `{{ path }}` tags from `values` (rules in template.ts). */
export function createTemplateRenderTool(): Tool {
  return {
    name: "template.render",
    version: NATIVE_TOOL_VERSION,
    description:
      "Renders a text template, replacing each {{ path.to.value }} with the value at that dotted path of `values` " +
      "(digits index arrays; objects and arrays as JSON; null as nothing; no HTML escaping; \\{{ for a literal {{). " +
      "A path that does not resolve fails the call.",
    inputs: [
      { name: "template", type: "string", required: true, description: "the template text" },
      { name: "values", type: "object", required: false, defaultValue: {}, description: "the values the paths read" },
    ],
    outputs: [{ name: "text", type: "string", required: true, description: "the rendered text" }],
    runtime: nativeRuntime("templateRender", 30_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input) {
      try {
        return { text: renderTemplate(String(input.template), input.values as JsonObject) };
      } catch (error) {
        if (error instanceof TemplateError) throw invalidInput(`template.render: ${error.message}`);
        throw error;
      }
    },
  };
}
