import { describe, expect, it } from "vitest";
import { renderTemplate, TemplateError } from "./template.js";

const values = {
  user: { name: "Ada", "first-name": "Ada", tags: ["x", "y"], age: 36, admin: false, manager: null },
  items: [{ title: "one" }, { title: "two" }],
  html: "<b>&</b>",
};

function failure(template: string): string {
  try {
    renderTemplate(template, values);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return (error as TemplateError).message;
  }
  throw new Error("expected a TemplateError");
}

describe("renderTemplate", () => {
  it("substitutes dotted paths, with or without spaces", () => {
    expect(renderTemplate("Hello {{ user.name }}, you are {{user.age}}.", values)).toBe("Hello Ada, you are 36.");
  });

  it("indexes arrays with digit segments", () => {
    expect(renderTemplate("{{ items.1.title }} / {{ user.tags.0 }}", values)).toBe("two / x");
  });

  it("writes booleans, null, objects and arrays as JSON does (null as nothing)", () => {
    expect(renderTemplate("{{ user.admin }}|{{ user.manager }}|{{ user.tags }}|{{ items.0 }}", values)).toBe(
      'false||["x","y"]|{"title":"one"}',
    );
  });

  it("does not escape HTML", () => {
    expect(renderTemplate("{{ html }}", values)).toBe("<b>&</b>");
  });

  it("reads keys with hyphens and leaves text without tags alone", () => {
    expect(renderTemplate("{{ user.first-name }}", values)).toBe("Ada");
    expect(renderTemplate("no tags { } }} here", values)).toBe("no tags { } }} here");
  });

  it("writes a literal {{ for \\{{", () => {
    expect(renderTemplate("\\{{ user.name }} is {{ user.name }}", values)).toBe("{{ user.name }} is Ada");
  });

  it("names the missing path, the segment that failed and where", () => {
    expect(failure("Hi {{ user.email }}")).toBe(
      '{{ user.email }} at line 1, column 4: values.user has no "email" (it is an object)',
    );
    expect(failure("a\nb {{ items.5.title }}")).toBe(
      '{{ items.5.title }} at line 2, column 3: values.items has no "5" (it is an array of 2)',
    );
    expect(failure("{{ user.name.first }}")).toBe(
      '{{ user.name.first }} at line 1, column 1: values.user.name has no "first" (it is the string "Ada")',
    );
    expect(failure("{{ nobody }}")).toBe('{{ nobody }} at line 1, column 1: values has no "nobody" (it is an object)');
  });

  it("does not reach inherited properties", () => {
    expect(failure("{{ user.constructor }}")).toContain('has no "constructor"');
    expect(failure("{{ items.length }}")).toContain('has no "length"');
  });

  it("refuses malformed tags", () => {
    expect(failure("{{ user.name ")).toBe(
      "the {{ at line 1, column 1 is not closed by }} (write \\{{ for a literal {{)",
    );
    expect(failure("{{ }}")).toBe("{{ }} at line 1, column 1 is not a dotted path such as {{ user.name }}");
    expect(failure("{{ user..name }}")).toMatch(/is not a dotted path/);
    expect(failure("{{ a b }}")).toMatch(/is not a dotted path/);
  });
});
