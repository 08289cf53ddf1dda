import { describe, expect, it } from "vitest";
import { formatPathPattern, formatPathTemplate, toOpenApiPath } from "./format.js";
import { parsePathTemplate } from "./parse.js";
import { PathTemplateError } from "./path-template-error.js";

describe("formatPathTemplate", () => {
  const cases: { source: string; canonical: string; pattern: string }[] = [
    { source: "/", canonical: "/", pattern: "/" },
    { source: "/v1/things", canonical: "/v1/things", pattern: "/v1/things" },
    { source: "/v1/{id=*}", canonical: "/v1/{id}", pattern: "/v1/*" },
    { source: "/v1/{id}:cancel", canonical: "/v1/{id}:cancel", pattern: "/v1/*:cancel" },
    { source: "/v1/{name=shelves/*}/books", canonical: "/v1/{name=shelves/*}/books", pattern: "/v1/shelves/*/books" },
    { source: "/v1/{name=**}", canonical: "/v1/{name=**}", pattern: "/v1/**" },
    { source: "/v1/*/{a.b}/**:x", canonical: "/v1/*/{a.b}/**:x", pattern: "/v1/*/*/**:x" },
    { source: "/v1/a:b/{c}", canonical: "/v1/a:b/{c}", pattern: "/v1/a:b/*" },
  ];

  it.each(cases)("$source", ({ source, canonical, pattern }) => {
    const template = parsePathTemplate(source);
    expect(formatPathTemplate(template)).toBe(canonical);
    expect(formatPathPattern(template)).toBe(pattern);
    // Canonical text parses back to the same data.
    const reparsed = parsePathTemplate(canonical);
    expect({ ...reparsed, source }).toStrictEqual(template);
  });
});

describe("toOpenApiPath", () => {
  const cases: { source: string; path: string; parameters: { name: string; fieldPath: string; pattern?: string }[] }[] =
    [
      { source: "/v1/things", path: "/v1/things", parameters: [] },
      {
        source: "/v1/{name=shelves/*}/books",
        path: "/v1/shelves/{name}/books",
        parameters: [{ name: "name", fieldPath: "name", pattern: "shelves/*" }],
      },
      {
        source: "/v1/things/{thing_id}:cancel",
        path: "/v1/things/{thing_id}:cancel",
        parameters: [{ name: "thing_id", fieldPath: "thing_id" }],
      },
      {
        source: "/v1/{book.name=shelves/*/books/*}/{page=**}",
        path: "/v1/shelves/{book.name_1}/books/{book.name_2}/{page}",
        parameters: [
          { name: "book.name_1", fieldPath: "book.name", pattern: "shelves/*/books/*" },
          { name: "book.name_2", fieldPath: "book.name", pattern: "shelves/*/books/*" },
          { name: "page", fieldPath: "page", pattern: "**" },
        ],
      },
      { source: "/v1/{id=*}", path: "/v1/{id}", parameters: [{ name: "id", fieldPath: "id" }] },
    ];

  it.each(cases)("$source", ({ source, path, parameters }) => {
    expect(toOpenApiPath(parsePathTemplate(source))).toStrictEqual({ path, parameters });
  });

  it.each(["/v1/*/things", "/v1/**"])("rejects an unnamed wildcard in %s", (source) => {
    expect(() => toOpenApiPath(parsePathTemplate(source))).toThrow(PathTemplateError);
    expect(() => toOpenApiPath(parsePathTemplate(source))).toThrow(
      `path template ${JSON.stringify(source)}: an unnamed "${source.endsWith("**") ? "**" : "*"}" cannot be described in OpenAPI; bind it to a field`,
    );
  });
});
