import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, test } from "vitest";
import {
  accepts,
  get,
  loadConformance,
  rejects,
  runCase,
  send,
  withBody,
  type Conformance,
  type ConformanceCase,
} from "./rest-harness.js";

/**
 * Transcoding conformance, part 1: path templates, percent-encoding, routing errors, the error
 * envelope, response JSON and server-stream framing. Every row asserts either the exact request
 * message the implementation received or the exact status and error body.
 */

let conformance: Conformance;
beforeAll(async () => {
  conformance = await loadConformance();
});

const notFound = (path: string, method = "GET") => `no route for ${method} ${path}`;
const badSegment = (raw: string, field: string) =>
  `path segment "${raw}" for field "${field}" is not valid percent-encoded UTF-8`;

const pathTemplates: ConformanceCase[] = [
  accepts("literal template", get("/v1/things/healthz"), "healthz", {}),
  accepts("{field} variable", get("/v1/things/t1"), "getThing", { id: "t1" }),
  accepts("additional binding with two variables", get("/v1/shelves/s1/things/t1"), "getThing", {
    id: "t1",
    shelfId: "s1",
  }),
  accepts("nested field path {parent.name}", get("/v1/parents/p1/children"), "getChild", {
    parent: { name: "p1", tag: "" },
  }),
  accepts(
    "nested path variable keeps query sibling sub-fields",
    get("/v1/parents/p1/children?parent.tag=t&view=v"),
    "getChild",
    {
      parent: { name: "p1", tag: "t" },
      view: "v",
    },
  ),
  accepts("{name=shelves/*}", get("/v1/shelves/s1"), "getShelf", { name: "shelves/s1" }),
  accepts("{name=shelves/*/books/*}", get("/v1/shelves/s1/books/b1"), "getBook", { name: "shelves/s1/books/b1" }),
  accepts("{path=**} over several segments", get("/v1/files/a/b/c.txt"), "getFile", { path: "a/b/c.txt" }),
  accepts("{path=**} over one segment", get("/v1/files/a"), "getFile", { path: "a" }),
  accepts("{path=**} over zero segments", get("/v1/files"), "getFile", { path: "" }),
  accepts("custom verb :cancel", withBody("POST", "/v1/ops/o1:cancel", '{"reason":"r"}'), "cancelOp", {
    id: "o1",
    reason: "r",
  }),
  accepts("value containing ':' without a verb", get("/v1/ops/a:b"), "getOp", { id: "a:b" }),
  accepts("a verb of another method is part of the value", get("/v1/ops/o1:cancel"), "getOp", { id: "o1:cancel" }),
  accepts("an escaped ':' never separates a verb", get("/v1/ops/o1%3Acancel"), "getOp", { id: "o1:cancel" }),
  rejects("unknown verb on a literal", get("/v1/things:bogus"), 404, "not_found", notFound("/v1/things:bogus")),
  accepts("literal beats variable", get("/v1/things/healthz"), "healthz", {}),
  accepts("variable beside a literal", get("/v1/things/healthy"), "getThing", { id: "healthy" }),
  accepts(
    "literal without the method falls back to the variable",
    { method: "DELETE", path: "/v1/things/healthz" },
    "deleteThing",
    {
      id: "healthz",
    },
  ),
  accepts("backtracking: /v1/tree/b/d leaves the literal b branch", get("/v1/tree/b/d"), "treeVariable", { x: "b" }),
  accepts("backtracking: the literal route itself", get("/v1/tree/b/c"), "treeLiteral", {}),
  accepts("backtracking: other value", get("/v1/tree/q/d"), "treeVariable", { x: "q" }),
  accepts("escapes of unreserved characters match literals", get("/v1/thing%73/healthz"), "healthz", {}),
  rejects("trailing slash is 404", get("/v1/things/t1/"), 404, "not_found", notFound("/v1/things/t1/")),
  rejects("trailing slash on a collection is 404", get("/v1/things/"), 404, "not_found", notFound("/v1/things/")),
  rejects("empty segment // is 404", get("/v1//things"), 404, "not_found", notFound("/v1//things")),
  rejects("extra segment is 404", get("/v1/things/t1/extra"), 404, "not_found", notFound("/v1/things/t1/extra")),
  rejects(
    "too few segments for shelves/*/books/*",
    get("/v1/shelves/s1/books"),
    404,
    "not_found",
    notFound("/v1/shelves/s1/books"),
  ),
];

const percentEncoding: ConformanceCase[] = [
  accepts("%2F in a single-segment variable decodes to /", get("/v1/things/a%2Fb"), "getThing", { id: "a/b" }),
  accepts("%2f lowercase in a single-segment variable", get("/v1/things/a%2fb"), "getThing", { id: "a/b" }),
  accepts("%2F stays in a multi-segment variable", get("/v1/shelves/a%2Fb"), "getShelf", { name: "shelves/a%2Fb" }),
  accepts("%2f lowercase stays as written", get("/v1/shelves/a%2fb/books/c"), "getBook", {
    name: "shelves/a%2fb/books/c",
  }),
  accepts("%2F stays in ** while other escapes decode", get("/v1/files/a%2Fb/%C3%A9%20x"), "getFile", {
    path: "a%2Fb/é x",
  }),
  accepts("%20 decodes to a space", get("/v1/things/a%20b"), "getThing", { id: "a b" }),
  accepts("+ stays + in the path", get("/v1/things/a+b"), "getThing", { id: "a+b" }),
  accepts("UTF-8 %C3%A9", get("/v1/things/caf%C3%A9"), "getThing", { id: "café" }),
  accepts("%25 decodes to %", get("/v1/things/100%25"), "getThing", { id: "100%" }),
  accepts("reserved characters %3F %23 %26", get("/v1/things/%3F%23%26"), "getThing", { id: "?#&" }),
  rejects("invalid %zz is 400", get("/v1/things/a%zz"), 400, "invalid_argument", badSegment("a%zz", "id")),
  rejects("truncated %4 is 400", get("/v1/things/a%4"), 400, "invalid_argument", badSegment("a%4", "id")),
  rejects("escape that is not UTF-8 is 400", get("/v1/things/%FF"), 400, "invalid_argument", badSegment("%FF", "id")),
  rejects(
    "invalid escape in a multi-segment variable",
    get("/v1/shelves/%zz"),
    400,
    "invalid_argument",
    badSegment("%zz", "name"),
  ),
];

const thing = {
  id: "t1",
  title: "",
  size: "0",
  color: "COLOR_UNSPECIFIED",
  data: "",
  tags: [],
  archived: false,
  views: "0",
  counts: {},
  score: 0,
};
const fail = (error: Error) => () => {
  throw error;
};

const routingErrors: ConformanceCase[] = [
  rejects("unknown path is 404 with the envelope", get("/v2/nothing"), 404, "not_found", notFound("/v2/nothing")),
  rejects("root path is 404", get("/"), 404, "not_found", notFound("/")),
  rejects(
    "wrong method is 405 with Allow (sorted)",
    { method: "PUT", path: "/v1/things/t1" },
    405,
    "unimplemented",
    "PUT is not allowed on /v1/things/t1; allowed: DELETE, GET, PATCH",
    {
      headers: { allow: "DELETE, GET, PATCH" },
    },
  ),
  rejects(
    "405 lists methods of literal and variable routes",
    { method: "PUT", path: "/v1/things/healthz" },
    405,
    "unimplemented",
    "PUT is not allowed on /v1/things/healthz; allowed: DELETE, GET, PATCH",
    {
      headers: { allow: "DELETE, GET, PATCH" },
    },
  ),
  rejects(
    "POST on a GET-only collection",
    withBody("POST", "/v1/things", "{}"),
    405,
    "unimplemented",
    "POST is not allowed on /v1/things; allowed: GET",
    {
      headers: { allow: "GET" },
    },
  ),
  rejects(
    "GET on a POST-only route",
    get("/v1/shelves/s1/things"),
    405,
    "unimplemented",
    "GET is not allowed on /v1/shelves/s1/things; allowed: POST",
    {
      headers: { allow: "POST" },
    },
  ),
  rejects(
    "405 on a verb path lists both readings",
    { method: "DELETE", path: "/v1/ops/o1:cancel" },
    405,
    "unimplemented",
    "DELETE is not allowed on /v1/ops/o1:cancel; allowed: GET, POST",
    {
      headers: { allow: "GET, POST" },
    },
  ),
  rejects(
    "methods are case-sensitive",
    { method: "get", path: "/v1/things/t1" },
    405,
    "unimplemented",
    "get is not allowed on /v1/things/t1; allowed: DELETE, GET, PATCH",
    {
      headers: { allow: "DELETE, GET, PATCH" },
    },
  ),
  rejects(
    "415 for a non-JSON body",
    withBody("POST", "/v1/ops/o1:cancel", "reason=r", { "content-type": "text/plain" }),
    415,
    "invalid_argument",
    'unsupported content type "text/plain": send application/json',
  ),
  rejects(
    "415 for a form body",
    withBody("POST", "/v1/shelves/s1/things", "title=x", { "content-type": "application/x-www-form-urlencoded" }),
    415,
    "invalid_argument",
    'unsupported content type "application/x-www-form-urlencoded": send application/json',
  ),
  rejects(
    "413 over readMaxBytes",
    withBody("POST", "/v1/shelves/s1/things", JSON.stringify({ title: "x".repeat(64) })),
    413,
    "resource_exhausted",
    "request body exceeds 32 bytes",
    {
      options: { readMaxBytes: 32 },
    },
  ),
  accepts(
    "a body at readMaxBytes is read",
    withBody("POST", "/v1/shelves/s1/things", '{"title":"0123456789abcdefghij"}'),
    "createThing",
    { shelfId: "s1", title: "0123456789abcdefghij" },
    {
      options: { readMaxBytes: 32 },
    },
  ),
];

const implementationErrors: ConformanceCase[] = [
  rejects("NotFound is 404", get("/v1/things/t1"), 404, "not_found", "x", {
    reply: fail(new ConnectError("x", Code.NotFound)),
  }),
  rejects("FailedPrecondition is 400", get("/v1/things/t1"), 400, "failed_precondition", "not ready", {
    reply: fail(new ConnectError("not ready", Code.FailedPrecondition)),
  }),
  rejects("AlreadyExists is 409", get("/v1/things/t1"), 409, "already_exists", "dup", {
    reply: fail(new ConnectError("dup", Code.AlreadyExists)),
  }),
  rejects("Aborted is 409", get("/v1/things/t1"), 409, "aborted", "retry", {
    reply: fail(new ConnectError("retry", Code.Aborted)),
  }),
  rejects("PermissionDenied is 403", get("/v1/things/t1"), 403, "permission_denied", "no", {
    reply: fail(new ConnectError("no", Code.PermissionDenied)),
  }),
  rejects("Unauthenticated is 401", get("/v1/things/t1"), 401, "unauthenticated", "who", {
    reply: fail(new ConnectError("who", Code.Unauthenticated)),
  }),
  rejects(
    "ResourceExhausted is 429 with retry-after from metadata",
    get("/v1/things/t1"),
    429,
    "resource_exhausted",
    "slow down",
    {
      reply: fail(new ConnectError("slow down", Code.ResourceExhausted, { "retry-after": "7" })),
      headers: { "retry-after": "7" },
    },
  ),
  rejects("Unavailable is 503", get("/v1/things/t1"), 503, "unavailable", "down", {
    reply: fail(new ConnectError("down", Code.Unavailable)),
  }),
  rejects("Unimplemented is 501", get("/v1/things/t1"), 501, "unimplemented", "later", {
    reply: fail(new ConnectError("later", Code.Unimplemented)),
  }),
  rejects("DeadlineExceeded is 504", get("/v1/things/t1"), 504, "deadline_exceeded", "late", {
    reply: fail(new ConnectError("late", Code.DeadlineExceeded)),
  }),
  rejects("InvalidArgument from the implementation is 400", get("/v1/things/t1"), 400, "invalid_argument", "bad id", {
    reply: fail(new ConnectError("bad id", Code.InvalidArgument)),
  }),
  // An error no handler raised on purpose says nothing but internal and the request id: its text
  // could hold SQL, bound parameters or paths.
  rejects(
    "Internal is 500 with the request id only",
    get("/v1/things/t1", { "x-request-id": "r-7" }),
    500,
    "internal",
    "internal error (request id r-7)",
    {
      reply: fail(new ConnectError("oops", Code.Internal)),
    },
  ),
  rejects(
    "a plain Error is 500 internal with the request id only",
    get("/v1/things/t1", { "x-request-id": "r-8" }),
    500,
    "internal",
    "internal error (request id r-8)",
    {
      reply: fail(new Error("Failed query: select 1\nparams: s3cret")),
    },
  ),
  accepts(
    "response headers and trailers of the implementation are sent",
    get("/v1/things/t1"),
    "getThing",
    { id: "t1" },
    {
      reply: (_request, context) => {
        context.responseHeader.set("x-request-id", "r-1");
        context.responseTrailer.set("x-trailer", "tr");
        return {};
      },
      headers: { "x-request-id": "r-1", "x-trailer": "tr", "content-type": "application/json" },
    },
  ),
];

const responseJson: ConformanceCase[] = [
  accepts(
    "every field is emitted at its default",
    get("/v1/things/t1"),
    "getThing",
    { id: "t1" },
    { reply: () => ({ id: "t1" }), json: thing },
  ),
  accepts(
    "int64 as string, enum as name, bytes base64, uint64 max",
    get("/v1/things/t1"),
    "getThing",
    { id: "t1" },
    {
      reply: () => ({
        id: "t1",
        size: 9007199254740993n,
        color: 2,
        data: new Uint8Array([0xfb, 0xff, 0x01]),
        tags: ["a"],
        archived: true,
        views: 18446744073709551615n,
        counts: { a: -5n },
        createTime: { seconds: 1700000000n, nanos: 500000000 },
        score: 1.5,
      }),
      json: {
        ...thing,
        size: "9007199254740993",
        color: "COLOR_GREEN",
        data: "+/8B",
        tags: ["a"],
        archived: true,
        views: "18446744073709551615",
        counts: { a: "-5" },
        createTime: "2023-11-14T22:13:20.500Z",
        score: 1.5,
      },
    },
  ),
  accepts(
    "an unknown enum number is written as a number",
    get("/v1/things/t1"),
    "getThing",
    { id: "t1" },
    { reply: () => ({ color: 7 }), json: { ...thing, id: "", color: 7 } },
  ),
  accepts(
    "non-finite doubles are strings",
    get("/v1/things/t1"),
    "getThing",
    { id: "t1" },
    { reply: () => ({ score: Number.NaN }), json: { ...thing, id: "", score: "NaN" } },
  ),
  accepts(
    "response_body sends only that field",
    get("/v1/things/t1/envelope"),
    "getEnvelope",
    { id: "t1" },
    {
      reply: () => ({ thing: { id: "t1", size: 3n }, etag: "e1" }),
      json: { ...thing, size: "3" },
    },
  ),
  accepts(
    "response_body of an unset message is null",
    get("/v1/things/t1/envelope"),
    "getEnvelope",
    { id: "t1" },
    { reply: () => ({ etag: "e1" }), text: "null" },
  ),
  accepts(
    "repeated messages in the response",
    get("/v1/things"),
    "listThings",
    {},
    {
      reply: () => ({ things: [{ id: "a" }, { id: "b" }], nextPageToken: "n" }),
      json: {
        things: [
          { ...thing, id: "a" },
          { ...thing, id: "b" },
        ],
        nextPageToken: "n",
      },
    },
  ),
];

const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" };
const ndjsonHeaders = {
  "content-type": "application/x-ndjson",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};
const frame = (json: unknown) => JSON.stringify(json);

const streams: ConformanceCase[] = [
  accepts(
    "SSE: one data event per message",
    get("/v1/things:watch?filter=f"),
    "watchThings",
    { filter: "f" },
    {
      stream: () => [{ id: "a", size: 1n }, { id: "b" }],
      headers: sseHeaders,
      text: `data: ${frame({ ...thing, id: "a", size: "1" })}\n\ndata: ${frame({ ...thing, id: "b" })}\n\n`,
    },
  ),
  accepts(
    "NDJSON: one JSON per line",
    get("/v1/things:export"),
    "exportThings",
    {},
    {
      stream: () => [{ id: "a", color: 1 }, { id: "b" }],
      headers: ndjsonHeaders,
      text: `${frame({ ...thing, id: "a", color: "COLOR_RED" })}\n${frame({ ...thing, id: "b" })}\n`,
    },
  ),
  accepts(
    "SSE: an empty stream is 200 with no events",
    get("/v1/things:watch"),
    "watchThings",
    {},
    { stream: () => [], headers: sseHeaders, text: "" },
  ),
  accepts(
    "SSE: an error after the first message ends the stream with event: error",
    get("/v1/things:watch"),
    "watchThings",
    {},
    {
      stream: () => [{ id: "a" }, new ConnectError("gone", Code.Aborted)],
      headers: sseHeaders,
      text: `data: ${frame({ ...thing, id: "a" })}\n\nevent: error\ndata: ${frame({ code: "aborted", message: "gone" })}\n\n`,
    },
  ),
  accepts(
    "NDJSON: an error after the first message ends the stream with {error}, normalised",
    get("/v1/things:export", { "x-request-id": "r-9" }),
    "exportThings",
    {},
    {
      stream: () => [{ id: "a" }, new Error("kaput")],
      headers: ndjsonHeaders,
      text: `${frame({ ...thing, id: "a" })}\n${frame({ error: { code: "internal", message: "internal error (request id r-9)" } })}\n`,
    },
  ),
  rejects(
    "SSE: an error before the first message gets its HTTP status",
    get("/v1/things:watch"),
    404,
    "not_found",
    "no such watch",
    {
      stream: () => [new ConnectError("no such watch", Code.NotFound)],
    },
  ),
  rejects(
    "NDJSON: an error before the first message gets its HTTP status",
    get("/v1/things:export"),
    403,
    "permission_denied",
    "denied",
    {
      stream: () => [new ConnectError("denied", Code.PermissionDenied, { "x-reason": "policy" })],
      headers: { "x-reason": "policy" },
    },
  ),
  rejects(
    "stream routes reject bad query input before calling the implementation",
    get("/v1/things:watch?bogus=1"),
    400,
    "invalid_argument",
    'unknown query parameter "bogus"',
  ),
];

describe("transcoding conformance: routing, errors and responses", () => {
  test.each(pathTemplates)("path template: $name", (row) => runCase(conformance, row));
  test.each(percentEncoding)("percent-encoding: $name", (row) => runCase(conformance, row));
  test.each(routingErrors)("routing: $name", (row) => runCase(conformance, row));
  test.each(implementationErrors)("implementation error: $name", (row) => runCase(conformance, row));
  test.each(responseJson)("response JSON: $name", (row) => runCase(conformance, row));
  test.each(streams)("server stream: $name", (row) => runCase(conformance, row));
});

// HEAD is answered by the exchange as by the REST planes: the GET route's answer without its body.
describe("transcoding conformance: HEAD", () => {
  test("a GET route answers HEAD with its status and headers and no body", async () => {
    conformance.reset();
    const answer = await send(conformance.handler(), { method: "HEAD", path: "/v1/things/t1" });
    expect([answer.status, answer.header.get("content-type"), answer.text]).toEqual([200, "application/json", ""]);
    expect(conformance.received.map((r) => r.rpc)).toEqual(["getThing"]);
  });

  test("an error is answered without a body too, and a route without GET is 405", async () => {
    conformance.reset();
    conformance.reply = () => {
      throw new ConnectError("absent", Code.NotFound);
    };
    const missing = await send(conformance.handler(), { method: "HEAD", path: "/v1/things/t1" });
    expect([missing.status, missing.text]).toEqual([404, ""]);
    const refused = await send(conformance.handler(), { method: "HEAD", path: "/v1/shelves/s1/things" });
    expect([refused.status, refused.header.get("allow"), refused.text]).toEqual([405, "POST", ""]);
  });

  test("a stream route answers HEAD with its headers and ends the stream", async () => {
    conformance.reset();
    conformance.stream = () => [{ id: "a" }, { id: "b" }];
    const answer = await send(conformance.handler(), { method: "HEAD", path: "/v1/things:watch" });
    expect([answer.status, answer.header.get("content-type"), answer.text]).toEqual([200, "text/event-stream", ""]);
  });
});
