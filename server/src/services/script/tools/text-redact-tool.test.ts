import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { MAX_REDACT_CHARS } from "./text-redact-tool.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const redact = async (input: JsonObject) =>
  (await registry.invoke("org", "text.redact", input, testContext())) as {
    text: string;
    counts: { email: number; phone: number };
  };
const redacted = async (text: string) => (await redact({ text })).text;

describe("text.redact", () => {
  it("replaces e-mail addresses and phone numbers in running text and counts them", async () => {
    const text =
      "Write to jane.doe+orders@mail.example.co.uk or call +44 20 7946 0958 (office) / (415) 555-2671 by 2024-05-01.";
    expect(await redact({ text })).toEqual({
      text: "Write to [email] or call [phone] (office) / [phone] by 2024-05-01.",
      counts: { email: 1, phone: 2 },
    });
  });

  it.each([
    "+1 (415) 555-2671",
    "+1-800-555-0199",
    "+14155552671",
    "+33 1 23 45 67 89",
    "+49 30 1234567",
    "+44 (0)20 7946 0958",
    "+61.2.9374.4000",
    "(415) 555-2671",
    "415-555-2671",
    "415.555.2671",
    "415 555 2671",
    "1-800-555-0199",
    "1 (800) 555-0199",
    "030/1234567",
    "+49 (0)89 123456-78",
    "0171 1234567",
    "(02) 9374 4000",
    "0412 345 678",
    "020 7946 0958",
    "01 23 45 67 89",
    "06-12-34-56-78",
    "030 1234567",
  ])("replaces the phone number %s", async (phone) => {
    expect(await redacted(`Call ${phone}, please.`)).toBe("Call [phone], please.");
    expect(await redacted(`Tel:${phone}`)).toBe("Tel:[phone]");
  });

  it.each([
    "a@example.com",
    "First.Last@sub.example.org",
    "x_y%z-1@mail-relay.example.io",
    "ops+alerts@example.travel",
  ])("replaces the e-mail address %s", async (email) => {
    expect(await redacted(`<${email}>; mailto:${email}.`)).toBe("<[email]>; mailto:[email].");
  });

  it.each([
    ["dates", "Due 2024-05-01, 01/05/2024, 2024/05/01 10:30, 01.05.2024, 1 May 2024, 2019-2024."],
    ["fractions and paths", "Mix 1/2 cup, see /api/v1/123456789/items and 12/05/2024 14:00."],
    ["ISO timestamps", "At 2024-05-01T10:30:00Z, 2024-05-01T10:30:00.123+02:00 and 2024-05-01 10:30:15."],
    ["times", "Open 09:00-17:30, call at 10:30 15 minutes early."],
    ["ids", "Order ORD-2024-000123, invoice INV-2024-0001, ticket #4155552671, id 4155552671, ref 123456789012."],
    ["UUIDs", "Request 550e8400-e29b-41d4-a716-446655440000 failed."],
    ["prices", "It costs $1,299.99, €12 345 678,90, 1 299 000,00 € or USD 2,499,000."],
    ["grouped numbers", "A population of 123 456 789 and 1.234.567 visitors."],
    ["version numbers", "Upgrade from v10.4.12 to 2.0.1-beta, then 1.22.333.4444, lodash@4.17.21 and node@20.11.1."],
    ["IP addresses", "Hosts 192.168.100.200, 172.16.254.100 and 10.0.0.1 answered."],
    ["ISBNs", "ISBN 978-3-16-148410-0."],
    ["card-length numbers", "Card 4111 1111 1111 1111."],
    ["handles", "Ask @support or user@localhost."],
  ])("leaves %s alone", async (_name, text) => {
    expect(await redact({ text })).toEqual({ text, counts: { email: 0, phone: 0 } });
  });

  it("finds a phone number right after a date in one run of digit groups", async () => {
    expect(await redacted("on 2024-05-01 415-555-2671")).toBe("on 2024-05-01 [phone]");
  });

  it("replaces only the kinds asked for, with the replacement given", async () => {
    const text = "a@example.com, 415-555-2671";
    expect(await redact({ text, kinds: ["phone"], replacement: "***" })).toEqual({
      text: "a@example.com, ***",
      counts: { email: 0, phone: 1 },
    });
    expect(await redact({ text, kinds: ["email"], replacement: "<{kind} removed>" })).toEqual({
      text: "<email removed>, 415-555-2671",
      counts: { email: 1, phone: 0 },
    });
    expect(await redact({ text, kinds: [] })).toEqual({ text, counts: { email: 0, phone: 0 } });
  });

  // Inputs that make a backtracking pattern try many ways at every position, at the largest size
  // the tool accepts. Each finishes within the test's timeout only if the scan stays linear.
  it.each([
    ["local-part characters with no @", "a".repeat(MAX_REDACT_CHARS)],
    ["@ after every 63 local-part characters", `${"a".repeat(63)}@`.repeat(MAX_REDACT_CHARS / 64)],
    ["one @ before a million one-letter labels", `a@${"a.".repeat(MAX_REDACT_CHARS / 2 - 1)}`],
    ["digits with no separator", "1".repeat(MAX_REDACT_CHARS)],
    ["one-digit groups", "1 ".repeat(MAX_REDACT_CHARS / 2)],
    ["eight-digit groups", "12345678-".repeat(Math.floor(MAX_REDACT_CHARS / 9))],
    ["area codes", "(1)".repeat(Math.floor(MAX_REDACT_CHARS / 3))],
  ])("scans %s in linear time", async (_name, text) => {
    const { counts } = await redact({ text });
    expect(counts.email).toBe(0);
  });

  it.each([
    [{ text: "x".repeat(MAX_REDACT_CHARS + 1) }, `text must be at most ${MAX_REDACT_CHARS} characters`],
    [{ text: "x", kinds: ["email", "ssn"] }, 'kinds[1] must be "email" or "phone", got the string "ssn"'],
    [{ text: "x", replacement: "#".repeat(101) }, "replacement must be at most 100 characters"],
    [{ text: 3 }, 'input "text" must be a string'],
  ])("refuses %#", async (input, message) => {
    expect(
      (await toolError(registry.invoke("org", "text.redact", input, testContext()), "invalid_input")).message,
    ).toContain(message);
  });
});
