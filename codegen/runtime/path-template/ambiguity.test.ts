import { describe, expect, it } from "vitest";
import { findAmbiguousRoutes } from "./ambiguity.js";
import { createPathMatcher } from "./match.js";
import { parsePathTemplate } from "./parse.js";
import { PathTemplateError } from "./path-template-error.js";
import type { PathRoute } from "./path-template.js";

const route = (httpMethod: string, source: string): PathRoute<string> => ({
  httpMethod,
  template: parsePathTemplate(source),
  target: `${httpMethod} ${source}`,
});

describe("findAmbiguousRoutes", () => {
  const ambiguous: [string, string][] = [
    ["/v1/{a}", "/v1/{b}"],
    ["/v1/{a}", "/v1/{a}"],
    ["/v1/{a}/x", "/v1/{b=*}/x"],
    ["/v1/**", "/v1/{x=**}"],
    ["/v1/*", "/v1/{id}"],
    ["/v1/{a}/{b}", "/v1/{c=*/*}"],
    ["/v1/{name=shelves/*}", "/v1/shelves/{shelf}"],
    ["/v1/{id}:cancel", "/v1/{thing}:cancel"],
    ["/", "/"],
  ];

  it.each(ambiguous)("%s and %s are ambiguous", (a, b) => {
    const first = route("GET", a);
    const second = route("GET", b);
    expect(findAmbiguousRoutes([first, second])).toStrictEqual([[first, second]]);
  });

  const distinct: [string, string][] = [
    ["/v1/healthz", "/v1/{id}"],
    ["/v1/{a}", "/v1/{a}/x"],
    ["/v1/*", "/v1/**"],
    ["/v1/{a}", "/v1/{a}:cancel"],
    ["/v1/{a}:cancel", "/v1/{a}:undelete"],
    ["/a/b/{x}", "/a/{y}/c"],
    ["/v1", "/v1/**"],
    ["/v1/{name=shelves/*}", "/v1/{name=books/*}"],
    ["/v1/a:b/c", "/v1/a/c"],
  ];

  it.each(distinct)("%s and %s are told apart by precedence", (a, b) => {
    expect(findAmbiguousRoutes([route("GET", a), route("GET", b)])).toStrictEqual([]);
  });

  it("only compares routes with the same method", () => {
    expect(findAmbiguousRoutes([route("GET", "/v1/{a}"), route("DELETE", "/v1/{b}")])).toStrictEqual([]);
  });

  it("reports every pair in a group, in input order", () => {
    const [a, b, c, d] = [route("GET", "/v1/{a}"), route("GET", "/v2"), route("GET", "/v1/{b}"), route("GET", "/v1/*")];
    expect(findAmbiguousRoutes([a, b, c, d])).toStrictEqual([
      [a, c],
      [a, d],
      [c, d],
    ]);
  });
});

describe("createPathMatcher with ambiguous routes", () => {
  it("throws a PathTemplateError listing every pair", () => {
    const routes = [
      route("GET", "/v1/{a}"),
      route("GET", "/v1/healthz"),
      route("GET", "/v1/{b=*}"),
      route("POST", "/v1/**"),
      route("POST", "/v1/{rest=**}"),
    ];
    expect(() => createPathMatcher(routes)).toThrow(PathTemplateError);
    expect(() => createPathMatcher(routes)).toThrow(
      'path template "/v1/{b=*}": ambiguous routes, each pair matches exactly the same requests: ' +
        "GET /v1/{a} and GET /v1/{b}; POST /v1/** and POST /v1/{rest=**}",
    );
  });

  it("accepts literal beside variable", () => {
    expect(() => createPathMatcher([route("GET", "/v1/healthz"), route("GET", "/v1/{id}")])).not.toThrow();
  });
});

describe("findAmbiguousRoutes and verbs", () => {
  it("tells a verb from a literal containing the same colon", () => {
    // `/x/a:b` is literal `a` plus verb `b`; `{n=x/a:b}` is the literal `a:b`. The verb reading wins.
    const withVerb = route("GET", "/x/a:b");
    const withColonLiteral = route("GET", "/{n=x/a:b}");
    expect(findAmbiguousRoutes([withVerb, withColonLiteral])).toStrictEqual([]);
    const matcher = createPathMatcher([withVerb, withColonLiteral]);
    expect(matcher.match("GET", "/x/a:b")).toMatchObject({ kind: "matched", target: "GET /x/a:b" });
  });
});
