import { describe, expect, it } from "vitest";
import { compileProtos, runPlugin } from "./compile-proto.js";

// Contracts the generator must refuse, each with a message that names the element and the rule.
const header = `syntax = "proto3";
package rules.v1;
import "google/api/annotations.proto";
import "google/api/field_behavior.proto";
import "platform/api/v1/annotations.proto";
message Req { string name = 1; repeated string tags = 2; int32 page_size = 3; string page_token = 4; Inner inner = 5; }
message Inner { string id = 1; }
message Res { string name = 1; }
message Page { repeated Res a = 1; repeated Res b = 2; string next_page_token = 3; }
`;

const generate = async (service: string) =>
  runPlugin(await compileProtos({ "rules/v1/rules.proto": `${header}\n${service}` }));

const cases: [string, string, string][] = [
  [
    "a server stream with an HTTP route but no framing",
    `service S { rpc W(Req) returns (stream Res) { option (google.api.http) = {get: "/v1/w"}; } }`,
    "rpc rules.v1.S.W: a server stream with an HTTP binding needs (platform.api.v1.stream_framing)",
  ],
  [
    "framing on a unary method",
    `service S { rpc U(Req) returns (Res) { option (platform.api.v1.stream_framing) = STREAM_FRAMING_SSE; option (google.api.http) = {get: "/v1/u"}; } }`,
    "rpc rules.v1.S.U: (platform.api.v1.stream_framing) is only for server streams",
  ],
  [
    "an HTTP route on a client stream",
    `service S { rpc C(stream Req) returns (Res) { option (google.api.http) = {post: "/v1/c" body: "*"}; } }`,
    "rpc rules.v1.S.C: a client_streaming method cannot have an HTTP binding",
  ],
  [
    "a body on GET",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/g" body: "*"}; } }`,
    "rpc rules.v1.S.G: a GET binding cannot have a body",
  ],
  [
    "a path variable naming no field",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/{missing}"}; } }`,
    "rpc rules.v1.S.G: path variable {missing} names no field of rules.v1.Req",
  ],
  [
    "a path variable on a repeated field",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/{tags}"}; } }`,
    "rpc rules.v1.S.G: path variable {tags} must be a singular scalar or enum field",
  ],
  [
    "a path variable on a message field",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/{inner}"}; } }`,
    "rpc rules.v1.S.G: path variable {inner} must be a singular scalar or enum field",
  ],
  [
    "a body naming no field",
    `service S { rpc P(Req) returns (Res) { option (google.api.http) = {post: "/v1/p" body: "nope"}; } }`,
    `rpc rules.v1.S.P: body "nope" names no top-level field of rules.v1.Req`,
  ],
  [
    "a repeated body field",
    `service S { rpc P(Req) returns (Res) { option (google.api.http) = {post: "/v1/p" body: "tags"}; } }`,
    `rpc rules.v1.S.P: body "tags" must not be a repeated field`,
  ],
  [
    "a response_body naming no field",
    `service S { rpc P(Req) returns (Res) { option (google.api.http) = {post: "/v1/p" body: "*" response_body: "nope"}; } }`,
    `rpc rules.v1.S.P: response_body "nope" names no top-level field of rules.v1.Res`,
  ],
  [
    "a malformed template",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "v1/no-slash"}; } }`,
    "rpc rules.v1.S.G: path template",
  ],
  [
    "nested additional bindings",
    `service S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/a" additional_bindings {get: "/v1/b" additional_bindings {get: "/v1/c"}}}; } }`,
    "rpc rules.v1.S.G: additional_bindings must not nest",
  ],
  [
    "a paginated response with two repeated message fields",
    `service S { rpc L(Req) returns (Page) { option (google.api.http) = {get: "/v1/l"}; } }`,
    "rpc rules.v1.S.L: a paginated response needs exactly one repeated message field, found 2",
  ],
  [
    "two routes that match the same paths",
    `service S {
      rpc A(Req) returns (Res) { option (google.api.http) = {get: "/v1/things/{name}"}; }
      rpc B(Req) returns (Res) { option (google.api.http) = {get: "/v1/things/{page_token}"}; }
    }`,
    "ambiguous HTTP routes:\n  GET /v1/things/{name} (rules.v1.S.A) and GET /v1/things/{page_token} (rules.v1.S.B)",
  ],
  [
    "a request schema name taken by a message",
    `message Wrap { Res res = 1; ResInput other = 2; }
    message ResInput { string id = 1; }
    service S { rpc P(Wrap) returns (Res) { option (google.api.http) = {post: "/v1/p" body: "*"}; } }`,
    "rules.v1.Res is read in requests and responses, and its request schema's name rules.v1.ResInput is taken by a message",
  ],
  [
    "enum_number on a field that is no enum",
    `service S { rpc L(Num) returns (Res) { option (google.api.http) = {get: "/v1/l"}; } }
    message Num { string name = 1 [(platform.api.v1.query_parameter) = {enum_number: true}]; }`,
    "rpc rules.v1.S.L: field name: enum_number is only for enum fields",
  ],
  [
    "a query alias that shadows a field's own name",
    `service S { rpc L(Alias) returns (Res) { option (google.api.http) = {get: "/v1/l"}; } }
    message Alias { string name = 1 [(platform.api.v1.query_parameter) = {aliases: "page_size"}]; int32 page_size = 2; }`,
    `rpc rules.v1.S.L: field name: query alias "page_size" is not a free parameter name`,
  ],
  [
    "an ignored query field with another query option",
    `service S { rpc L(Both) returns (Res) { option (google.api.http) = {get: "/v1/l"}; } }
    message Both { string name = 1 [(platform.api.v1.query_parameter) = {http_ignored: true, aliases: "n"}]; }`,
    "rpc rules.v1.S.L: field name: an http_ignored field takes no other query option",
  ],
];

describe("the generator refuses", () => {
  it.each(cases)("%s", async (_name, service, message) => {
    await expect(generate(service)).rejects.toThrow(message);
  });
});

describe("the generator accepts", () => {
  it("a literal beside a variable at the same place", async () => {
    const files = await generate(`service S {
      rpc A(Req) returns (Res) { option (google.api.http) = {get: "/v1/things/healthz"}; }
      rpc B(Req) returns (Res) { option (google.api.http) = {get: "/v1/things/{name}"}; }
    }`);
    expect(files.has("rules/v1/rules_http.ts")).toBe(true);
  });

  it("a server stream without an HTTP route and without framing", async () => {
    const files = await generate(`service S { rpc W(Req) returns (stream Res); }`);
    expect(files.get("rules/v1/rules_client.ts")).toContain(`w: { kind: "server_streaming", idempotency: "unknown" }`);
  });
});

describe("the gRPC protocol services", () => {
  it("get no routes, glue, SDK client or OpenAPI path: the transport serves them itself", async () => {
    const files = runPlugin(
      await compileProtos({
        "grpc/health/v1/health.proto": `syntax = "proto3";
package grpc.health.v1;
message HealthCheckRequest { string service = 1; }
message HealthCheckResponse { int32 status = 1; }
service Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }`,
        "rules/v1/rules.proto": `${header}\nservice S { rpc G(Req) returns (Res) { option (google.api.http) = {get: "/v1/g"}; } }`,
      }),
    );
    expect([...files.keys()].filter((name) => name.startsWith("grpc/"))).toEqual([]);
    expect(files.has("rules/v1/rules_server.ts")).toBe(true);
    const openapi = [...files]
      .filter(([name]) => name.endsWith(".json") || name.endsWith(".yaml"))
      .map(([, content]) => content);
    expect(openapi.length).toBeGreaterThan(0);
    for (const document of openapi) expect(document).not.toContain("grpc.health");
  });
});

describe("the OpenAPI documents", () => {
  const document = (files: Map<string, string>, name: string): unknown => JSON.parse(files.get(name)!);

  it("name the listener of each path, and require in responses what the server always writes", async () => {
    const files =
      await generate(`message Both { string id = 1; optional string note = 2; Inner inner = 3; repeated string tags = 4; }
    message Put { Both both = 1 [(google.api.field_behavior) = REQUIRED]; }
    service Api { rpc P(Put) returns (Both) { option (google.api.http) = {post: "/v1/both" body: "*"}; } }
    service Data {
      option (platform.api.v1.listener) = LISTENER_DATA;
      rpc G(Req) returns (Res) { option (google.api.http) = {get: "/{name}/res"}; }
    }`);
    const doc = document(files, "openapi/rules.v1.openapi.json") as {
      servers: { url: string }[];
      paths: Record<string, { servers: { url: string }[] }>;
      components: { schemas: Record<string, { required?: string[] }> };
    };
    expect(doc.servers.map((s) => s.url)).toEqual(["{api_url}", "{data_api_url}"]);
    expect(doc.paths["/v1/both"]!.servers.map((s) => s.url)).toEqual(["{api_url}"]);
    expect(doc.paths["/{name}/res"]!.servers.map((s) => s.url)).toEqual(["{data_api_url}"]);
    // Written even at their defaults: the implicit-presence scalar and the repeated field; not the optional or the message.
    expect(doc.components.schemas["rules.v1.Both"]!.required).toEqual(["id", "tags"]);
    expect(doc.components.schemas["rules.v1.BothInput"]!.required).toBeUndefined();
    expect(doc.components.schemas["rules.v1.Put"]!.required).toEqual(["both"]);
  });

  it("publish the declared query casing, aliases, enum numbers, and leave ignored fields out", async () => {
    const files = await generate(`enum Kind { KIND_UNSPECIFIED = 0; KIND_A = 1; }
    message Find {
      string bucket = 1;
      string store_entity_id = 2;
      Kind kind = 3 [(platform.api.v1.query_parameter) = {enum_number: true}];
      int32 status = 4 [(platform.api.v1.query_parameter) = {aliases: "status_filter"}];
      int32 page_size = 5 [(platform.api.v1.query_parameter) = {http_ignored: true}];
    }
    service S {
      rpc Snake(Find) returns (Res) {
        option (google.api.http) = {get: "/{bucket}/snake"};
        option (platform.api.v1.query_casing) = QUERY_CASING_SNAKE;
      }
      rpc Camel(Find) returns (Res) { option (google.api.http) = {get: "/{bucket}/camel"}; }
    }`);
    const routes = files.get("rules/v1/rules_http.ts")!;
    expect(routes).toContain(
      [
        `    queryFields: ["store_entity_id","kind","status"],`,
        `    queryCasing: "snake",`,
        `    queryAliases: {"status_filter":"status","statusFilter":"status"},`,
        `    queryEnumNumbers: ["kind"],`,
        `    queryIgnored: ["page_size"],`,
      ].join("\n"),
    );
    const doc = document(files, "openapi/rules.v1.openapi.json") as {
      paths: Record<string, { get: { parameters: { name: string; in: string; schema: unknown }[] } }>;
    };
    const query = (path: string) => doc.paths[path]!.get.parameters.filter((p) => p.in === "query");
    expect(query("/{bucket}/snake").map((p) => p.name)).toEqual(["store_entity_id", "kind", "status", "status_filter"]);
    expect(query("/{bucket}/camel").map((p) => p.name)).toEqual(["storeEntityId", "kind", "status", "status_filter"]);
    expect(query("/{bucket}/snake")[1]!.schema).toEqual({ type: "integer", format: "int32", enum: [0, 1] });
  });

  it("write every field of the data listener's answers: unset messages and optionals are required and nullable", async () => {
    const files =
      await generate(`message Out { string id = 1; optional string note = 2; Inner inner = 3; oneof pick { string a = 4; string b = 5; } }
    service Data {
      option (platform.api.v1.listener) = LISTENER_DATA;
      rpc G(Req) returns (Out) { option (google.api.http) = {get: "/{name}/out"}; }
    }`);
    expect(files.get("rules/v1/rules_http.ts")).toContain("    emitUnpopulated: true,");
    const doc = document(files, "openapi/rules.v1.openapi.json") as {
      components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
    };
    const out = doc.components.schemas["rules.v1.Out"]!;
    expect(out.required).toEqual(["id", "note", "inner"]);
    expect(out.properties["inner"]).toEqual({
      oneOf: [{ $ref: "#/components/schemas/rules.v1.Inner" }, { type: "null" }],
    });
  });
});
