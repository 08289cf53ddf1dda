import { beforeAll, describe, test } from "vitest";
import {
  accepts,
  get,
  loadConformance,
  rejects,
  runCase,
  withBody,
  type Conformance,
  type ConformanceCase,
} from "./rest-harness.js";

/**
 * Transcoding conformance, part 2: how the request message is built from the body and the query
 * string. Every row asserts either the exact request message the implementation received or the
 * exact status and error body. Messages quoted from @bufbuild/protobuf are asserted verbatim so
 * that a change in what clients read shows up here.
 */

let conformance: Conformance;
beforeAll(async () => {
  conformance = await loadConformance();
});

const create = (body: string, query = "", headers?: Record<string, string>) =>
  withBody("POST", `/v1/shelves/s1/things${query}`, body, headers);
const update = (body: string, query = "") => withBody("PATCH", `/v1/things/t1${query}`, body);
const list = (query: string) => get(`/v1/things?${query}`);
const bad = (message: string, status = 400) => ({ status, code: "invalid_argument", message });
const decodeField = (field: string, why: string) =>
  `cannot decode field conformance.v1.ListThingsRequest.${field} from JSON: ${why}`;
const thing = {
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
const refuse = (name: string, call: Parameters<typeof rejects>[1], error: ReturnType<typeof bad>) =>
  rejects(name, call, error.status, error.code, error.message);

const body: ConformanceCase[] = [
  accepts(
    "body * fills the fields, path adds its own",
    create('{"title":"t","pageSize":3,"flag":true,"color":"COLOR_RED","size":"12","data":"AQI=","tags":["a","b"]}'),
    "createThing",
    {
      shelfId: "s1",
      title: "t",
      pageSize: 3,
      flag: true,
      color: "COLOR_RED",
      size: "12",
      data: "AQI=",
      tags: ["a", "b"],
    },
  ),
  accepts("body * accepts proto-name keys", create('{"page_size":3,"title":"t"}'), "createThing", {
    shelfId: "s1",
    pageSize: 3,
    title: "t",
  }),
  accepts("path overrides the body (camelCase key)", create('{"shelfId":"body","title":"t"}'), "createThing", {
    shelfId: "s1",
    title: "t",
  }),
  accepts("path overrides the body (proto-name key)", create('{"shelf_id":"body"}'), "createThing", { shelfId: "s1" }),
  accepts("empty body with * gives defaults", { method: "POST", path: "/v1/shelves/s1/things" }, "createThing", {
    shelfId: "s1",
  }),
  accepts("{} with * gives defaults", create("{}"), "createThing", { shelfId: "s1" }),
  accepts("int64 as a JSON number, enum as a number", create('{"size":12,"color":2}'), "createThing", {
    shelfId: "s1",
    size: "12",
    color: "COLOR_GREEN",
  }),
  accepts("url-safe base64 in the body", create('{"data":"-_8"}'), "createThing", { shelfId: "s1", data: "+/8=" }),
  accepts(
    "content type with charset",
    create('{"title":"t"}', "", { "content-type": "application/json; charset=utf-8" }),
    "createThing",
    { shelfId: "s1", title: "t" },
  ),
  accepts(
    "a +json content type",
    create('{"title":"t"}', "", { "content-type": "application/merge-patch+json" }),
    "createThing",
    { shelfId: "s1", title: "t" },
  ),
  refuse(
    "invalid JSON",
    create("{bad"),
    bad("request body is not valid JSON: Expected property name or '}' in JSON at position 1"),
  ),
  rejects(
    "body that is not UTF-8",
    withBody("POST", "/v1/shelves/s1/things", new Uint8Array([0x7b, 0xff, 0x7d])),
    400,
    "invalid_argument",
    /^request body is not valid JSON: /,
  ),
  refuse(
    "array body for *",
    create("[1]"),
    bad("request body must be a JSON object of conformance.v1.CreateThingRequest"),
  ),
  refuse(
    "string body for *",
    create('"x"'),
    bad("request body must be a JSON object of conformance.v1.CreateThingRequest"),
  ),
  refuse(
    "null body for *",
    create("null"),
    bad("request body must be a JSON object of conformance.v1.CreateThingRequest"),
  ),
  refuse(
    "unknown JSON field names the field",
    create('{"title":"t","bogus":1}'),
    bad('cannot decode message conformance.v1.CreateThingRequest from JSON: key "bogus" is unknown'),
  ),
  refuse(
    "string for bool",
    create('{"flag":"true"}'),
    bad('cannot decode field conformance.v1.CreateThingRequest.flag from JSON: expected boolean, got "true"'),
  ),
  refuse(
    "object for string",
    create('{"title":{}}'),
    bad("cannot decode field conformance.v1.CreateThingRequest.title from JSON: expected string, got object"),
  ),
  refuse(
    "body to a no-body GET route",
    withBody("GET", "/v1/things/t1", "{}"),
    bad("GET /v1/things/{id} takes no request body"),
  ),
  refuse(
    "body to a no-body DELETE route",
    withBody("DELETE", "/v1/things/t1", '{"id":"x"}'),
    bad("DELETE /v1/things/{id} takes no request body"),
  ),
  refuse(
    "body and query set the same field (body *)",
    create('{"title":"b"}', "?title=q"),
    bad('query parameter "title" is not allowed here: field "title" comes from the path or the body'),
  ),
  refuse(
    "no query at all with body *",
    create("{}", "?flag=true"),
    bad('query parameter "flag" is not allowed here: field "flag" comes from the path or the body'),
  ),
  accepts(
    "body = one field, the rest from the query",
    update('{"title":"x","size":"5"}', "?update_mask=title,size&request_id=r1"),
    "updateThing",
    {
      thing: { ...thing, id: "t1", title: "x", size: "5" },
      updateMask: "title,size",
      requestId: "r1",
    },
  ),
  accepts(
    "body = one field: the path overrides a sub-field and keeps the others",
    update('{"id":"body","title":"x"}'),
    "updateThing",
    {
      thing: { ...thing, id: "t1", title: "x" },
      requestId: "",
    },
  ),
  accepts("body = one field: camelCase query names", update("{}", "?updateMask=tags&requestId=r2"), "updateThing", {
    thing: { ...thing, id: "t1" },
    updateMask: "tags",
    requestId: "r2",
  }),
  refuse(
    "body = one field: the query cannot reach into it",
    update("{}", "?thing.title=q"),
    bad('query parameter "thing.title" is not allowed here: field "thing" comes from the path or the body'),
  ),
  refuse(
    "body = one field: not an object",
    update('"str"'),
    bad('cannot decode message conformance.v1.Thing from JSON: "str"'),
  ),
  refuse(
    "body = one field: unknown key",
    update('{"bogus":1}'),
    bad('cannot decode message conformance.v1.Thing from JSON: key "bogus" is unknown'),
  ),
];

const query: ConformanceCase[] = [
  accepts("camelCase names", list("pageSize=5&pageToken=abc"), "listThings", { pageSize: 5, pageToken: "abc" }),
  accepts("snake_case names", list("page_size=5&page_token=abc"), "listThings", { pageSize: 5, pageToken: "abc" }),
  accepts("nested by dots", list("filter.status=ACTIVE&filter.min_size=3&filter.inner.note=n"), "listThings", {
    filter: { status: "ACTIVE", minSize: 3, inner: { note: "n" } },
  }),
  accepts("nested camelCase", list("filter.minSize=4"), "listThings", { filter: { status: "", minSize: 4 } }),
  accepts("repeated by repetition", list("tags=a&tags=b&tags=a"), "listThings", { tags: ["a", "b", "a"] }),
  accepts("repeated enums by name and number", list("colors=COLOR_RED&colors=2"), "listThings", {
    colors: ["COLOR_RED", "COLOR_GREEN"],
  }),
  accepts("map with string keys", list("attrs[a]=1&attrs[b]=x%20y"), "listThings", { attrs: { a: "1", b: "x y" } }),
  accepts("map with int keys", list("names_by_id[5]=five&namesById[-1]=neg"), "listThings", {
    namesById: { 5: "five", "-1": "neg" },
  }),
  accepts("map with enum values", list("color_by_key[x]=COLOR_RED&colorByKey[y]=2"), "listThings", {
    colorByKey: { x: "COLOR_RED", y: "COLOR_GREEN" },
  }),
  accepts(
    "repeated message by position",
    list("labels.key=a&labels.value=1&labels.key=b&labels.value=2"),
    "listThings",
    {
      labels: [
        { key: "a", value: 1 },
        { key: "b", value: 2 },
      ],
    },
  ),
  accepts("Timestamp as RFC 3339", list("since=2024-01-02T03:04:05.5Z"), "listThings", {
    since: "2024-01-02T03:04:05.500Z",
  }),
  accepts("Timestamp with an offset (+ escaped)", list("since=2024-01-02T05:04:05%2B02:00"), "listThings", {
    since: "2024-01-02T03:04:05Z",
  }),
  accepts("Duration 1.5s", list("timeout=1.5s"), "listThings", { timeout: "1.500s" }),
  accepts("FieldMask", list("read_mask=title,pageSize"), "listThings", { readMask: "title,pageSize" }),
  accepts("Int64Value", list("min_size=12"), "listThings", { minSize: "12" }),
  accepts("BoolValue false is present", list("archived=false"), "listThings", { archived: false }),
  accepts("bool true", list("flag=true"), "listThings", { flag: true }),
  accepts("bool false", list("flag=false"), "listThings", { flag: false }),
  accepts("int64 beyond 2^53 stays exact", list("count=9007199254740993"), "listThings", { count: "9007199254740993" }),
  accepts("int64 minimum", list("count=-9223372036854775808"), "listThings", { count: "-9223372036854775808" }),
  accepts("uint64 maximum", list("total=18446744073709551615"), "listThings", { total: "18446744073709551615" }),
  accepts("negative int32", list("small=-5"), "listThings", { small: -5 }),
  accepts("enum by name", list("color=COLOR_GREEN"), "listThings", { color: "COLOR_GREEN" }),
  accepts("enum by number", list("color=1"), "listThings", { color: "COLOR_RED" }),
  accepts("float and double", list("ratio=0.5&score=2.25"), "listThings", { ratio: 0.5, score: 2.25 }),
  accepts("NaN and Infinity", list("ratio=NaN&score=Infinity"), "listThings", { ratio: "NaN", score: "Infinity" }),
  accepts("-Infinity", list("score=-Infinity"), "listThings", { score: "-Infinity" }),
  accepts("bytes as standard base64 (escaped)", list("blob=%2B%2F8%3D"), "listThings", { blob: "+/8=" }),
  accepts("bytes as url-safe base64", list("blob=-_8"), "listThings", { blob: "+/8=" }),
  accepts("oneof set once by name", list("by_name=a"), "listThings", { byName: "a" }),
  accepts("oneof set once by number", list("byNumber=3"), "listThings", { byNumber: 3 }),
  accepts("+ in a query value is a space, %2B a plus", list("page_token=a+b%2Bc"), "listThings", {
    pageToken: "a b+c",
  }),
  accepts("escaped & and = in a value", list("page_token=a%26b%3Dc"), "listThings", { pageToken: "a&b=c" }),
  accepts("UTF-8 in a value", list("page_token=%C3%A9"), "listThings", { pageToken: "é" }),
  accepts("query fills the fields the path leaves", get("/v1/things/t1?view=full"), "getThing", {
    id: "t1",
    view: "full",
  }),
  refuse("bad bool", list("flag=yes"), bad('parameter "flag" must be true or false, got "yes"')),
  refuse("bool without a value", list("flag"), bad('parameter "flag" must be true or false, got ""')),
  refuse("bad BoolValue", list("archived=1"), bad('parameter "archived" must be true or false, got "1"')),
  refuse(
    "bad Timestamp",
    list("since=yesterday"),
    bad("cannot decode message google.protobuf.Timestamp from JSON: invalid RFC 3339 string"),
  ),
  refuse(
    "int32 overflow",
    list("small=2147483648"),
    bad(decodeField("small", "expected number (int32): 2147483648 out of range")),
  ),
  refuse(
    "uint64 overflow",
    list("total=18446744073709551616"),
    bad(decodeField("total", "expected bigint (uint64): 18446744073709551616 out of range")),
  ),
  refuse("empty int32", list("page_size="), bad(decodeField("page_size", 'expected number (int32), got ""'))),
  refuse("bad float", list("ratio=abc"), bad(decodeField("ratio", 'expected number (float32), got "abc"'))),
  refuse(
    "unknown enum name",
    list("color=COLOR_BLUE"),
    bad('cannot decode enum conformance.v1.Color from JSON: "COLOR_BLUE"'),
  ),
  refuse("bad base64", list("blob=!!"), bad(decodeField("blob", "invalid base64 string"))),
  refuse(
    "bad map key",
    list("names_by_id[x]=a"),
    bad(decodeField("names_by_id", 'invalid map key: expected number (int32), got "x"')),
  ),
  refuse(
    "oneof set twice",
    list("by_name=a&byNumber=1"),
    bad(
      "cannot decode oneof conformance.v1.ListThingsRequest.selector from JSON: oneof set multiple times by by_name and by_number",
    ),
  ),
  refuse("unknown parameter names it", list("bogus=1"), bad('unknown query parameter "bogus"')),
  refuse("unknown nested parameter", list("filter.bogus=1"), bad('unknown query parameter "filter.bogus"')),
  refuse("malformed parameter name", list("tags[=1"), bad('unknown query parameter "tags["')),
  refuse("sub-field of a scalar", list("page_size.x=1"), bad('unknown query parameter "page_size.x"')),
  refuse(
    "sub-field of a well-known type",
    list("since.seconds=5"),
    bad('unknown query parameter "since.seconds": field "since" has no sub-fields'),
  ),
  refuse(
    "parameter for a path-bound field",
    get("/v1/things/t1?id=x"),
    bad('query parameter "id" is not allowed here: field "id" comes from the path or the body'),
  ),
  refuse(
    "camelCase parameter for a path-bound field",
    get("/v1/shelves/s1/things/t1?shelfId=x"),
    bad('query parameter "shelfId" is not allowed here: field "shelf_id" comes from the path or the body'),
  ),
  refuse(
    "parameter for a nested path-bound field",
    get("/v1/parents/p1/children?parent.name=x"),
    bad('query parameter "parent.name" is not allowed here: field "parent.name" comes from the path'),
  ),
  refuse(
    "singular field given twice",
    list("page_size=1&pageSize=2"),
    bad('query parameter "pageSize" is given more than once'),
  ),
  refuse(
    "nested singular field given twice",
    list("filter.min_size=1&filter.minSize=2"),
    bad('query parameter "filter.minSize" is given more than once'),
  ),
  refuse(
    "map key given twice",
    list("attrs[a]=1&attrs[a]=2"),
    bad('query parameter "attrs[a]" is given more than once'),
  ),
  refuse(
    "map field without [key]",
    list("attrs=x"),
    bad('query parameter "attrs": map field "attrs" takes "attrs[key]=value"'),
  ),
  refuse(
    "[key] on a field that is not a map",
    list("tags[a]=x"),
    bad('query parameter "tags[a]": field "tags" is not a map'),
  ),
  refuse(
    "message field given as a scalar",
    list("filter=x"),
    bad('query parameter "filter": message field "filter" takes its sub-fields, as "filter.<field>"'),
  ),
  refuse(
    "repeated message given as a scalar",
    list("labels=x"),
    bad('query parameter "labels": repeated message field "labels" takes its sub-fields, as "labels.<field>"'),
  ),
];

describe("transcoding conformance: request body and query", () => {
  test.each(body)("body: $name", (row) => runCase(conformance, row));
  test.each(query)("query: $name", (row) => runCase(conformance, row));
});
