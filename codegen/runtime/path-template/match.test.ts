import { describe, expect, it } from "vitest";
import { type MatchResult, createPathMatcher } from "./match.js";
import { parsePathTemplate } from "./parse.js";
import type { PathRoute } from "./path-template.js";

const route = (httpMethod: string, source: string, target: string): PathRoute<string> => ({
  httpMethod,
  template: parsePathTemplate(source),
  target,
});

const routes: PathRoute<string>[] = [
  route("GET", "/", "root"),
  route("GET", "/v1/vectordb/healthz", "healthz"),
  route("GET", "/v1/vectordb/{service_id}", "getService"),
  route("DELETE", "/v1/vectordb/{service_id}", "deleteService"),
  route("GET", "/a/b/c", "abc"),
  route("GET", "/a/{x}/d", "axd"),
  route("POST", "/v1/things", "createThing"),
  route("GET", "/v1/things/{thing_id}", "getThing"),
  route("POST", "/v1/things/{thing_id}:cancel", "cancelThing"),
  route("GET", "/v1/things:search", "searchThings"),
  route("GET", "/v1/{name=shelves/*}/books", "listBooks"),
  route("GET", "/v1/{name=shelves/*/books/*}", "getBook"),
  route("GET", "/raw/{x}", "raw"),
  route("GET", "/files/{path=**}", "files"),
  route("POST", "/objects/{name=**}:publish", "publish"),
  route("GET", "/deep/{rest=**}", "deepRest"),
  route("GET", "/deep/x/{y}/z", "deepXyz"),
  route("GET", "/w/{one}", "wOne"),
  route("GET", "/w/{many=**}", "wMany"),
  route("GET", "/proto/{__proto__}/{constructor}", "protoNames"),
];

const matched = (target: string, captures: Record<string, string> = {}): MatchResult<string> => ({
  kind: "matched",
  target,
  captures,
});
const notAllowed = (...allowedMethods: string[]): MatchResult<string> => ({
  kind: "method-not-allowed",
  allowedMethods,
});
const notFound: MatchResult<string> = { kind: "not-found" };
const badPath = (segment: string, field: string): MatchResult<string> => ({
  kind: "bad-path",
  reason: `path segment ${JSON.stringify(segment)} for field ${JSON.stringify(field)} is not valid percent-encoded UTF-8`,
});

/** Captures have no prototype; spread them so `toStrictEqual` compares plain objects. */
function plain(result: MatchResult<string>): MatchResult<string> {
  return result.kind === "matched" ? { ...result, captures: { ...result.captures } } : result;
}

const cases: [method: string, path: string, expected: MatchResult<string>][] = [
  // Literal over variable, with method-aware backtracking.
  ["GET", "/v1/vectordb/healthz", matched("healthz")],
  ["GET", "/v1/vectordb/svc-1", matched("getService", { service_id: "svc-1" })],
  ["DELETE", "/v1/vectordb/healthz", matched("deleteService", { service_id: "healthz" })],
  ["GET", "/a/b/c", matched("abc")],
  ["GET", "/a/q/d", matched("axd", { x: "q" })],
  ["GET", "/a/b/d", matched("axd", { x: "b" })],
  ["GET", "/a/b/e", notFound],
  ["GET", "/deep/x/1/z", matched("deepXyz", { y: "1" })],
  ["GET", "/deep/x/1/q", matched("deepRest", { rest: "x/1/q" })],
  ["GET", "/deep/x", matched("deepRest", { rest: "x" })],
  // `*` over `**`; `**` matches zero segments.
  ["GET", "/w/a", matched("wOne", { one: "a" })],
  ["GET", "/w/a/b", matched("wMany", { many: "a/b" })],
  ["GET", "/w", matched("wMany", { many: "" })],
  ["GET", "/files", matched("files", { path: "" })],
  ["GET", "/files/x/y/z", matched("files", { path: "x/y/z" })],
  ["GET", "/", matched("root")],
  // Custom verbs, and a `:` inside a value when no verb route applies (grpc-gateway #1947).
  ["POST", "/v1/things/abc:cancel", matched("cancelThing", { thing_id: "abc" })],
  ["GET", "/v1/things/abc:cancel", matched("getThing", { thing_id: "abc:cancel" })],
  ["GET", "/v1/things/abc:other", matched("getThing", { thing_id: "abc:other" })],
  ["GET", "/v1/things/a:b:cancel", matched("getThing", { thing_id: "a:b:cancel" })],
  ["POST", "/v1/things/a:b:cancel", matched("cancelThing", { thing_id: "a:b" })],
  ["GET", "/v1/things/a%3Ab", matched("getThing", { thing_id: "a:b" })],
  ["GET", "/v1/things:search", matched("searchThings")],
  ["POST", "/v1/things/a%3Acancel", notAllowed("GET")],
  ["POST", "/v1/things/:cancel", notAllowed("GET")],
  ["POST", "/objects/a/b:publish", matched("publish", { name: "a/b" })],
  ["POST", "/objects:publish", matched("publish", { name: "" })],
  ["POST", "/objects/a/b", notFound],
  // 405 lists every method whose template matches, across both readings of a verb.
  ["PUT", "/v1/vectordb/healthz", notAllowed("DELETE", "GET")],
  ["HEAD", "/v1/vectordb/x", notAllowed("DELETE", "GET")],
  ["get", "/v1/vectordb/x", notAllowed("DELETE", "GET")],
  ["POST", "/v1/things/abc", notAllowed("GET")],
  ["PUT", "/v1/things/abc:cancel", notAllowed("GET", "POST")],
  ["DELETE", "/v1/things", notAllowed("POST")],
  ["GET", "/v1/things", notAllowed("POST")],
  ["POST", "/v1/things:search", notAllowed("GET")],
  // Percent-decoding: single-segment decodes `%2F`, multi-segment keeps it as written.
  ["GET", "/raw/a%2Fb", matched("raw", { x: "a/b" })],
  ["GET", "/raw/a%2fb", matched("raw", { x: "a/b" })],
  ["GET", "/files/a%2Fb/c", matched("files", { path: "a%2Fb/c" })],
  ["GET", "/files/a%2fb/c", matched("files", { path: "a%2fb/c" })],
  ["GET", "/files/%252F", matched("files", { path: "%2F" })],
  ["GET", "/files/a%20b/%C3%A9", matched("files", { path: "a b/é" })],
  ["GET", "/raw/%C3%A9", matched("raw", { x: "é" })],
  ["GET", "/raw/a+b", matched("raw", { x: "a+b" })],
  ["GET", "/raw/%2B", matched("raw", { x: "+" })],
  ["GET", "/raw/%25", matched("raw", { x: "%" })],
  ["GET", "/v1/shelves/s1/books", matched("listBooks", { name: "shelves/s1" })],
  ["GET", "/v1/shelves/s1/books/b%201", matched("getBook", { name: "shelves/s1/books/b 1" })],
  ["GET", "/v1/shelves/s%2F1/books/b1", matched("getBook", { name: "shelves/s%2F1/books/b1" })],
  ["GET", "/v1/shelve/s1/books", notFound],
  // Malformed escapes in a captured segment.
  ["GET", "/raw/%zz", badPath("%zz", "x")],
  ["GET", "/raw/%2", badPath("%2", "x")],
  ["GET", "/raw/%E9", badPath("%E9", "x")],
  ["GET", "/files/ok/a%2F%zz", badPath("a%2F%zz", "path")],
  ["GET", "/files/%C3%2F", badPath("%C3%2F", "path")],
  // Literals compare after decoding unreserved escapes only.
  ["GET", "/%76%31/vectordb/health%7a", matched("healthz")],
  ["GET", "/v1/vectordb/health%5Az", matched("getService", { service_id: "healthZz" })],
  ["GET", "/%zz/vectordb/healthz", notFound],
  // Trailing slashes, empty segments and non-paths match nothing.
  ["GET", "/v1/vectordb/healthz/", notFound],
  ["GET", "/v1//vectordb/healthz", notFound],
  ["GET", "//", notFound],
  ["GET", "/files/", notFound],
  ["GET", "", notFound],
  ["GET", "v1/vectordb/healthz", notFound],
  ["GET", "/nothing", notFound],
  // Dot segments are routed as received, never resolved.
  ["GET", "/raw/..", matched("raw", { x: ".." })],
  ["GET", "/a/../d", matched("axd", { x: ".." })],
  // Field names that are also Object.prototype keys.
  ["GET", "/proto/a/b", matched("protoNames", { ["__proto__"]: "a", constructor: "b" })],
];

describe("createPathMatcher", () => {
  const matcher = createPathMatcher(routes);

  it.each(cases)("%s %s", (method, path, expected) => {
    expect(plain(matcher.match(method, path))).toStrictEqual(expected);
  });

  it("answers the same whatever the order of the routes", () => {
    const orders = [
      [...routes].reverse(),
      [...routes].sort((a, b) => a.target.localeCompare(b.target)),
      [...routes].sort((a, b) => b.template.source.localeCompare(a.template.source)),
    ];
    for (const order of orders) {
      const reordered = createPathMatcher(order);
      for (const [method, path, expected] of cases) {
        expect(plain(reordered.match(method, path)), `${method} ${path}`).toStrictEqual(expected);
      }
    }
  });

  it("prefers a matching verb route wherever it is in the table", () => {
    const m = createPathMatcher([
      route("POST", "/v1/{name=**}", "create"),
      route("POST", "/v1/{name=**}:undelete", "undelete"),
    ]);
    expect(plain(m.match("POST", "/v1/a/b:undelete"))).toStrictEqual(matched("undelete", { name: "a/b" }));
    expect(plain(m.match("POST", "/v1/a/b:other"))).toStrictEqual(matched("create", { name: "a/b:other" }));
  });

  it("matches nothing when there are no routes", () => {
    expect(createPathMatcher([]).match("GET", "/")).toStrictEqual(notFound);
  });
});
