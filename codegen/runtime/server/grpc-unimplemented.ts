import { parseContentType as parseGrpcType } from "@connectrpc/connect/protocol-grpc";
import { parseContentType as parseGrpcWebType } from "@connectrpc/connect/protocol-grpc-web";
import type { NodeRequest, NodeResponse } from "./node-exchange.js";

/** gRPC's UNIMPLEMENTED, as the `grpc-status` trailer carries it. */
const UNIMPLEMENTED = 12;

/**
 * Answers a gRPC or gRPC-web call of a method that no service serves the way those protocols
 * do, so that clients report UNIMPLEMENTED rather than a transport error on an HTTP 404: HTTP 200
 * and a trailers-only response (the status in the headers, no message). `served` holds the
 * fully-qualified names of the services served, to say whether the service or only the method
 * is unknown. Returns false, answering nothing, for any other protocol (Connect and plain HTTP
 * keep their 404).
 */
export function answerUnimplementedGrpc(
  request: NodeRequest,
  response: NodeResponse,
  served: ReadonlySet<string>,
): boolean {
  const contentType = request.headers["content-type"] ?? null;
  const grpc = parseGrpcType(contentType);
  const grpcWeb = grpc ? undefined : parseGrpcWebType(contentType);
  if (!grpc && !grpcWeb) return false;
  const path = (request.url ?? "").split("?", 1)[0]!;
  const [, service = "", method = ""] = /^\/([^/]*)\/([^/]*)$/.exec(path) ?? [];
  const message = served.has(service)
    ? `method ${method.slice(0, 100)} is not implemented by service ${service}`
    : `service ${(service || path).slice(0, 200)} is not served here`;
  // Headers set, not written: end() then sends them with END_STREAM on HTTP/2, the trailers-only
  // form gRPC clients read the status from (headers, then an empty end, reads as a missing status).
  response.statusCode = 200;
  response.setHeader("content-type", grpc ? "application/grpc+proto" : "application/grpc-web+proto");
  response.setHeader("grpc-status", String(UNIMPLEMENTED));
  response.setHeader("grpc-message", encodeURIComponent(message));
  response.end();
  return true;
}
