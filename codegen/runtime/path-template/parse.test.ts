import { describe, expect, it } from "vitest";
import { parsePathTemplate } from "./parse.js";
import { PathTemplateError } from "./path-template-error.js";
import type { PathSegment, PathVariable } from "./path-template.js";

const lit = (value: string): PathSegment => ({ kind: "literal", value });
const star: PathSegment = { kind: "wildcard" };
const deep: PathSegment = { kind: "deep-wildcard" };
const v = (fieldPath: string, start: number, end: number): PathVariable => ({ fieldPath, start, end });

describe("parsePathTemplate grammar", () => {
  const cases: {
    source: string;
    segments: PathSegment[];
    variables?: PathVariable[];
    verb?: string;
  }[] = [
    { source: "/", segments: [] },
    { source: "/v1", segments: [lit("v1")] },
    { source: "/v1/things", segments: [lit("v1"), lit("things")] },
    { source: "/v1/*", segments: [lit("v1"), star] },
    { source: "/v1/**", segments: [lit("v1"), deep] },
    { source: "/**", segments: [deep] },
    { source: "/v1/*/x/**", segments: [lit("v1"), star, lit("x"), deep] },
    { source: "/v1/{id}", segments: [lit("v1"), star], variables: [v("id", 1, 2)] },
    { source: "/v1/{id=*}", segments: [lit("v1"), star], variables: [v("id", 1, 2)] },
    {
      source: "/v1/{name=shelves/*}/books",
      segments: [lit("v1"), lit("shelves"), star, lit("books")],
      variables: [v("name", 1, 3)],
    },
    {
      source: "/v1/{name=shelves/*/books/**}",
      segments: [lit("v1"), lit("shelves"), star, lit("books"), deep],
      variables: [v("name", 1, 5)],
    },
    { source: "/v1/{path=**}", segments: [lit("v1"), deep], variables: [v("path", 1, 2)] },
    {
      source: "/v1/{book.shelf.name}/{book.id}",
      segments: [lit("v1"), star, star],
      variables: [v("book.shelf.name", 1, 2), v("book.id", 2, 3)],
    },
    { source: "/v1/{_x9.Y_}", segments: [lit("v1"), star], variables: [v("_x9.Y_", 1, 2)] },
    { source: "/v1/{kind=fixed}", segments: [lit("v1"), lit("fixed")], variables: [v("kind", 1, 2)] },
    {
      source: "/v1/things/{thing_id}:cancel",
      segments: [lit("v1"), lit("things"), star],
      variables: [v("thing_id", 2, 3)],
      verb: "cancel",
    },
    { source: "/v1/things:search", segments: [lit("v1"), lit("things")], verb: "search" },
    {
      source: "/v1/{name=shelves/*}:undelete",
      segments: [lit("v1"), lit("shelves"), star],
      variables: [v("name", 1, 3)],
      verb: "undelete",
    },
    { source: "/v1/{name=**}:publish", segments: [lit("v1"), deep], variables: [v("name", 1, 2)], verb: "publish" },
    { source: "/v1/**:verb", segments: [lit("v1"), deep], verb: "verb" },
    { source: "/v1/*:verb", segments: [lit("v1"), star], verb: "verb" },
    // A `:` before the last top-level "/" is part of a literal, never a verb.
    { source: "/v1/a:b/c", segments: [lit("v1"), lit("a:b"), lit("c")] },
    // The verb starts at the last `:`, as the matcher splits request paths.
    { source: "/v1/a:b:c", segments: [lit("v1"), lit("a:b")], verb: "c" },
    // The "/" inside the braces does not hide the verb after them.
    { source: "/{a=x/*}:v", segments: [lit("x"), star], variables: [v("a", 0, 2)], verb: "v" },
    { source: "/v1/a-b.c_d~e!$&'()+,;@", segments: [lit("v1"), lit("a-b.c_d~e!$&'()+,;@")] },
    { source: "/v1/...", segments: [lit("v1"), lit("...")] },
  ];

  it.each(cases)("$source", ({ source, segments, variables = [], verb }) => {
    const expected = verb === undefined ? { source, segments, variables } : { source, segments, variables, verb };
    const parsed = parsePathTemplate(source);
    expect(parsed).toStrictEqual(expected);
    // Route tables embed the template as a literal, so it must survive JSON unchanged.
    expect(JSON.parse(JSON.stringify(parsed))).toStrictEqual(expected);
  });
});

describe("parsePathTemplate errors", () => {
  const cases: { source: string; position: number; reason: string }[] = [
    { source: "", position: 0, reason: 'a template must start with "/"' },
    { source: "v1/things", position: 0, reason: 'a template must start with "/"' },
    { source: "//", position: 1, reason: "empty segment" },
    { source: "/v1//things", position: 4, reason: "empty segment" },
    { source: "/v1/things/", position: 11, reason: "empty segment" },
    { source: "/v1/:verb", position: 4, reason: "empty segment" },
    { source: "/:verb", position: 1, reason: "empty segment" },
    { source: "/v1/{name=}", position: 10, reason: "empty segment" },
    { source: "/v1/{name=a//b}", position: 12, reason: "empty segment" },
    { source: "/v1/{a={b}}", position: 7, reason: "variables cannot be nested" },
    { source: "/v1/{a=x/{b}}", position: 9, reason: "variables cannot be nested" },
    { source: "/v1/{a{b}}", position: 6, reason: "variables cannot be nested" },
    { source: "/v1/{a}/{a}", position: 9, reason: 'field "a" is bound twice' },
    { source: "/v1/{a.b}/{a.b=*}", position: 11, reason: 'field "a.b" is bound twice' },
    { source: "/v1/{a}/{a.b}", position: 9, reason: 'fields "a" and "a.b" overlap' },
    { source: "/v1/{a.b}/{a}", position: 11, reason: 'fields "a.b" and "a" overlap' },
    { source: "/v1/**/x", position: 4, reason: '"**" must be the last segment' },
    { source: "/**/**", position: 1, reason: '"**" must be the last segment' },
    { source: "/v1/{a=**}/x", position: 7, reason: '"**" must be the last segment' },
    { source: "/v1/{name", position: 4, reason: 'unterminated "{"' },
    { source: "/v1/{name=shelves/*", position: 4, reason: 'unterminated "{"' },
    { source: "/v1/{name:cancel", position: 4, reason: 'unterminated "{"' },
    { source: "/v1/{}", position: 5, reason: 'invalid field path "": expected identifiers joined by "."' },
    { source: "/v1/{a.}", position: 5, reason: 'invalid field path "a.": expected identifiers joined by "."' },
    { source: "/v1/{.a}", position: 5, reason: 'invalid field path ".a": expected identifiers joined by "."' },
    { source: "/v1/{1a}", position: 5, reason: 'invalid field path "1a": expected identifiers joined by "."' },
    { source: "/v1/{a-b}", position: 5, reason: 'invalid field path "a-b": expected identifiers joined by "."' },
    { source: "/v1/{a:b}", position: 5, reason: 'invalid field path "a:b": expected identifiers joined by "."' },
    { source: "/v1/{a/b}", position: 5, reason: 'invalid field path "a/b": expected identifiers joined by "."' },
    { source: "/v1/a b", position: 5, reason: 'invalid character " " in literal' },
    { source: "/v1/a%20b", position: 5, reason: 'invalid character "%" in literal' },
    { source: "/v1/é", position: 4, reason: 'invalid character "é" in literal' },
    { source: "/v1/a=b", position: 5, reason: 'invalid character "=" in literal' },
    { source: "/v1/a*", position: 5, reason: 'invalid character "*" in literal' },
    { source: "/v1/a?b", position: 5, reason: 'invalid character "?" in literal' },
    { source: "/v1/*a", position: 4, reason: '"*" and "**" must be a whole segment' },
    { source: "/v1/***", position: 4, reason: '"*" and "**" must be a whole segment' },
    { source: "/v1/.", position: 4, reason: '"." cannot be a segment: URL parsers remove dot segments' },
    { source: "/v1/..", position: 4, reason: '".." cannot be a segment: URL parsers remove dot segments' },
    { source: "/v1/a{b}", position: 5, reason: "a variable must be a whole segment" },
    { source: "/v1/{a}{b}", position: 7, reason: "a variable must be a whole segment" },
    { source: "/v1/a}", position: 5, reason: 'unmatched "}"' },
    { source: "/v1/{a}}", position: 7, reason: 'unmatched "}"' },
    { source: "/v1/{a=b{c}}", position: 8, reason: "variables cannot be nested" },
    { source: "/v1/things:", position: 11, reason: 'empty custom verb after ":"' },
    { source: "/v1/things:a b", position: 12, reason: 'invalid character " " in custom verb' },
    { source: "/v1/things:*", position: 11, reason: 'invalid character "*" in custom verb' },
  ];

  it.each(cases)("$source: $reason", ({ source, position, reason }) => {
    let caught: unknown;
    try {
      parsePathTemplate(source);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PathTemplateError);
    const error = caught as PathTemplateError;
    expect({ template: error.template, position: error.position, reason: error.reason }).toStrictEqual({
      template: source,
      position,
      reason,
    });
    expect(error.name).toBe("PathTemplateError");
    expect(error.message).toBe(`path template ${JSON.stringify(source)} at position ${position}: ${reason}`);
  });
});
