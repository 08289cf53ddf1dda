import { describe, expect, it } from "vitest";
import { compileProtos, runPlugin } from "./compile-proto.js";

// (platform.api.v1.stream_error_event): the path's checks, and what each emitter makes of it.
const header = `syntax = "proto3";
package folds.v1;
import "google/api/annotations.proto";
import "platform/api/v1/annotations.proto";
message Req { string id = 1; }
message Event {
  oneof event { Started started = 1; Failed failed = 2; string note = 3; }
  string plain = 4;
  optional string maybe = 5;
  repeated Failed many = 6;
}
message Started { string id = 1; }
message Failed { string error = 1; int32 code = 2; Detail detail = 3; }
message Detail { string text = 1; }
`;

const generate = async (service: string) =>
  runPlugin(await compileProtos({ "folds/v1/folds.proto": `${header}\n${service}` }));

const streaming = (path: string, returns = "stream Event") =>
  `service S { rpc W(Req) returns (${returns}) {
    option (google.api.http) = {post: "/v1/w" body: "*"};
    ${returns.startsWith("stream") ? "option (platform.api.v1.stream_framing) = STREAM_FRAMING_NDJSON;" : ""}
    option (platform.api.v1.stream_error_event) = "${path}";
  } }`;

const where = (path: string) => `rpc folds.v1.S.W: (platform.api.v1.stream_error_event) "${path}"`;

describe("the generator refuses a stream error event", () => {
  it.each([
    ["on a unary method", streaming("failed.error", "Event"), `${where("failed.error")} is only for server streams`],
    [
      "naming no field",
      streaming("failure.error"),
      `${where("failure.error")}: folds.v1.Event has no field "failure" (proto field names, dot-separated)`,
    ],
    [
      "naming a JSON name instead of the proto name",
      streaming("failed.errorText"),
      `${where("failed.errorText")}: folds.v1.Failed has no field "errorText"`,
    ],
    [
      "starting outside a oneof",
      streaming("plain"),
      `${where("plain")}: the path must start with a member of a oneof of folds.v1.Event; "plain" is not one`,
    ],
    [
      "starting at a proto3 optional field, whose oneof is synthetic",
      streaming("maybe"),
      `${where("maybe")}: the path must start with a member of a oneof of folds.v1.Event; "maybe" is not one`,
    ],
    [
      "leading through a repeated field",
      streaming("many.error"),
      `${where("many.error")}: "many" must be a singular message field to lead further`,
    ],
    [
      "leading through a string",
      streaming("note.error"),
      `${where("note.error")}: "note" must be a singular message field to lead further`,
    ],
    [
      "ending at a number",
      streaming("failed.code"),
      `${where("failed.code")}: the path must end at a singular string field; "code" is not one`,
    ],
    [
      "ending at a message",
      streaming("failed.detail"),
      `${where("failed.detail")}: the path must end at a singular string field; "detail" is not one`,
    ],
  ])("%s", async (_name, service, message) => {
    await expect(generate(service)).rejects.toThrow(message);
  });
});

describe("a stream error event", () => {
  it("is accepted through nested messages, and at a string member of the oneof itself", async () => {
    await expect(generate(streaming("failed.detail.text"))).resolves.toBeDefined();
    await expect(generate(streaming("note"))).resolves.toBeDefined();
  });

  it("is written into the route table and the service binding", async () => {
    const files = await generate(streaming("failed.error"));
    expect(files.get("folds/v1/folds_http.ts")).toContain(`streamErrorEvent: "failed.error",`);
    expect(files.get("folds/v1/folds_server.ts")).toContain(`streamErrorEvents: {"w":"failed.error"}`);
  });

  it("reaches the service binding of a stream with no HTTP route", async () => {
    const files = await generate(`service S { rpc W(Req) returns (stream Event) {
      option (platform.api.v1.stream_error_event) = "failed.error";
    } }`);
    expect(files.get("folds/v1/folds_server.ts")).toContain(`streamErrorEvents: {"w":"failed.error"}`);
  });

  it("leaves a service without one as it was", async () => {
    const files = await generate(`service S { rpc W(Req) returns (stream Event) {
      option (google.api.http) = {post: "/v1/w" body: "*"};
      option (platform.api.v1.stream_framing) = STREAM_FRAMING_NDJSON;
    } }`);
    expect(files.get("folds/v1/folds_server.ts")).not.toContain("streamErrorEvents");
    expect(files.get("folds/v1/folds_http.ts")).not.toContain("streamErrorEvent");
  });

  it("is documented in the operation: one framing, the last frame a message, its member and field", async () => {
    const files = await generate(streaming("failed.detail.text"));
    const document = JSON.parse(files.get("openapi/folds.v1.openapi.json")!) as {
      paths: Record<string, { post: { description: string; responses: Record<string, { content: object }> } }>;
    };
    const operation = document.paths["/v1/w"]!.post;
    expect(operation.responses["200"]!.content).toEqual({
      "application/x-ndjson": {
        schema: { $ref: "#/components/schemas/folds.v1.Event" },
        "x-stream-framing": "ndjson",
        "x-stream-error-event": "failed.detail.text",
      },
    });
    expect(operation.description).toContain("The last frame is always one Event");
    expect(operation.description).toContain(
      "whose `failed` member is set, with the error's message in `failed.detail.text`",
    );
    expect(operation.description).toContain("Server-sent events (`text/event-stream`) are not offered");
    expect(operation.description).not.toContain('{"error"');
  });
});
