import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { PII_KINDS, redactPii } from "./pii-redaction.js";
import type { PiiKind } from "./pii-redaction.js";
import { invalidInput } from "./tool-error.js";
import { describe } from "./tool-input.js";
import type { JsonValue, Tool } from "./tool.js";

/**
 * Characters one call reads: the scan is linear, and this bounds it (and the event-loop time it
 * takes) to well under a second. The actions service caps an object's text at the same size.
 */
export const MAX_REDACT_CHARS = 2_000_000;
const MAX_REPLACEMENT_CHARS = 100;

/** `text.redact`: replaces e-mail addresses and phone numbers (rules in pii-redaction.ts). */
export function createTextRedactTool(): Tool {
  return {
    name: "text.redact",
    version: NATIVE_TOOL_VERSION,
    description:
      "Replaces e-mail addresses and phone numbers in a text (international +country forms and national numbers " +
      "written in groups with spaces, dashes, dots, slashes or an (area) code), leaving dates, times, prices, version numbers, " +
      "IP addresses and identifiers as they are. Counts what it replaced by kind.",
    inputs: [
      { name: "text", type: "string", required: true, description: `the text, at most ${MAX_REDACT_CHARS} characters` },
      {
        name: "kinds",
        type: "array",
        required: false,
        defaultValue: [...PII_KINDS],
        description: 'what to replace: "email", "phone" or both',
      },
      {
        name: "replacement",
        type: "string",
        required: false,
        defaultValue: "[{kind}]",
        description: "what each one becomes; {kind} is replaced by email or phone",
      },
    ],
    outputs: [
      { name: "text", type: "string", required: true, description: "the text with the replacements made" },
      { name: "counts", type: "object", required: true, description: "{email, phone}: how many of each were replaced" },
    ],
    runtime: nativeRuntime("textRedact", 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input) {
      const text = input.text as string;
      const replacement = input.replacement as string;
      if (text.length > MAX_REDACT_CHARS)
        throw invalidInput(`text.redact: text must be at most ${MAX_REDACT_CHARS} characters, got ${text.length}`);
      if (replacement.length > MAX_REPLACEMENT_CHARS)
        throw invalidInput(`text.redact: replacement must be at most ${MAX_REPLACEMENT_CHARS} characters`);
      const kinds = kindList(input.kinds as JsonValue[]);
      const { text: redacted, counts } = redactPii(text, kinds, replacement);
      return { text: redacted, counts: { ...counts } };
    },
  };
}

function kindList(values: readonly JsonValue[]): PiiKind[] {
  return values.map((value, index) => {
    if (!PII_KINDS.includes(value as PiiKind))
      throw invalidInput(`text.redact: kinds[${index}] must be "email" or "phone", got ${describe(value)}`);
    return value as PiiKind;
  });
}
