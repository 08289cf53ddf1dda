import { expect, it } from "vitest";
import { protocolOf } from "./request-protocol.js";

const procedure = "/platform.script.v1.ScriptService/HealthCheck";

it.each([
  ["POST", procedure, "application/grpc", "grpc"],
  ["POST", procedure, "application/grpc+proto", "grpc"],
  ["POST", procedure, "application/grpc-web+proto", "grpc-web"],
  ["POST", procedure, "application/grpc-web-text", "grpc-web"],
  ["POST", procedure, "application/connect+json", "connect"],
  ["POST", procedure, "application/json", "connect"],
  ["POST", procedure, "application/proto", "connect"],
  ["GET", procedure, undefined, "connect"],
  ["GET", "/v1/script/health", undefined, "http"],
  ["POST", "/v1/script/threads", "application/json", "http"],
  ["POST", procedure, "text/plain", "http"],
  ["OPTIONS", procedure, undefined, "http"],
  ["GET", "/healthz", undefined, "http"],
] as const)("%s %s (%s) is %s", (method, path, contentType, protocol) => {
  expect(protocolOf(method, path, contentType)).toBe(protocol);
});
