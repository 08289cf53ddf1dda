/** The wire protocol of a request, for logs and metrics. */
export type RequestProtocol = "connect" | "grpc" | "grpc-web" | "http";

/** `/<package>.<Service>/<Method>`: the procedure path of Connect, gRPC and gRPC-web. */
const PROCEDURE_PATH = /^\/[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*$/;

/**
 * Which protocol a request speaks, from its content type and path, the way connect-node tells them
 * apart: gRPC-web and gRPC by content type; Connect streams by `application/connect+*`; Connect
 * unary by a JSON or proto body (or a GET) on a procedure path; everything else is plain HTTP
 * (the transcoded routes, health, preflights).
 */
export function protocolOf(method: string, path: string, contentType: string | undefined): RequestProtocol {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  if (type.startsWith("application/connect+")) return "connect";
  if (!PROCEDURE_PATH.test(path)) return "http";
  if (method === "GET") return "connect";
  return method === "POST" && (type.startsWith("application/json") || type.startsWith("application/proto"))
    ? "connect"
    : "http";
}
