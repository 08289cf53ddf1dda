import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJson } from "@connectrpc/connect/protocol-connect";

/**
 * The one error model of the RPC planes: a ConnectError, written as the Connect error JSON
 * `{code, message, details}` with the standard code-to-HTTP-status table. Connect, gRPC-web and
 * the HTTP routes all render the same error the same way; a server writes only errors that went
 * through its normaliser (codegen/runtime/server/normalize-error.ts).
 */
export interface ErrorEnvelope {
  readonly status: number;
  readonly body: JsonObject;
  /** Headers the error carries (for example `retry-after`). */
  readonly headers: Headers;
}

export function errorEnvelope(connectError: ConnectError): ErrorEnvelope {
  return {
    status: codeToHttpStatus(connectError.code),
    body: errorToJson(connectError, undefined),
    headers: new Headers(connectError.metadata),
  };
}
