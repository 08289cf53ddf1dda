import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import { createReflectionIndex } from "./reflection-index.js";

const index = createReflectionIndex([ScriptService, Health, ScriptService]);
const names = (files: Uint8Array[] | undefined) =>
  files?.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name);

describe("the reflection index", () => {
  it("lists each service once, sorted", () => {
    expect(index.serviceNames).toEqual(["grpc.health.v1.Health", "platform.script.v1.ScriptService"]);
  });

  it("finds the file of every kind of symbol, with a leading dot or without", () => {
    const health = "grpc/health/v1/health.proto";
    for (const symbol of [
      "grpc.health.v1.Health",
      "grpc.health.v1.Health.Watch",
      "grpc.health.v1.HealthCheckRequest",
      "grpc.health.v1.HealthCheckRequest.service",
      "grpc.health.v1.HealthCheckResponse.ServingStatus",
      // Enum values are siblings of their enum.
      "grpc.health.v1.HealthCheckResponse.SERVICE_UNKNOWN",
      ".grpc.health.v1.HealthCheckResponse",
    ]) {
      expect(names(index.fileContainingSymbol(symbol))?.[0], symbol).toBe(health);
    }
    expect(index.fileContainingSymbol("grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING")).toBeUndefined();
    expect(index.fileContainingSymbol("grpc.health.v1.Nothing")).toBeUndefined();
  });

  it("answers a file first, then each file it imports, transitively and once", () => {
    const files = names(index.fileByName("platform/script/v1/script_service.proto"))!;
    expect(files[0]).toBe("platform/script/v1/script_service.proto");
    expect(files).toEqual(
      expect.arrayContaining([
        "google/api/annotations.proto",
        "google/api/http.proto",
        "google/protobuf/descriptor.proto",
      ]),
    );
    expect(new Set(files).size).toBe(files.length);
    expect(names(index.fileByName("grpc/health/v1/health.proto"))).toEqual(["grpc/health/v1/health.proto"]);
    expect(index.fileByName("platform/script/v1/script_service")).toBeUndefined();
  });

  it("knows the extensions the served files declare", () => {
    expect(names(index.fileContainingExtension("google.protobuf.MethodOptions", 72295728))?.[0]).toBe(
      "google/api/annotations.proto",
    );
    expect(index.fileContainingExtension("google.protobuf.MethodOptions", 1)).toBeUndefined();
    expect(index.extensionNumbersOf("google.protobuf.MethodOptions")).toContain(72295728);
    expect(index.extensionNumbersOf("grpc.health.v1.HealthCheckRequest")).toEqual([]);
    expect(index.extensionNumbersOf("no.such.Message")).toBeUndefined();
  });
});
