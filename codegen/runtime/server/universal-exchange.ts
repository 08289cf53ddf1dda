import { Code, ConnectError } from "@connectrpc/connect";
import { readAllBytes, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import type { ExchangeRequest } from "./rest-exchange.js";

const encoder = new TextEncoder();

/** A universal request (connect-node's) as the exchange reads it. */
export function exchangeRequestOf(request: UniversalServerRequest): ExchangeRequest {
  return {
    method: request.method,
    url: request.url,
    header: request.header,
    readBody: (readMaxBytes) => readRequestBody(request, readMaxBytes),
  };
}

/** The whole request body, or "too-large" once it passes `readMaxBytes` (before reading, when its length says so). */
async function readRequestBody(
  request: UniversalServerRequest,
  readMaxBytes: number,
): Promise<Uint8Array | "too-large"> {
  if (!(Symbol.asyncIterator in Object(request.body))) {
    // A framework already parsed the JSON body.
    return encoder.encode(JSON.stringify(request.body));
  }
  const length = Number(request.header.get("content-length") ?? Number.NaN);
  try {
    return await readAllBytes(
      request.body as AsyncIterable<Uint8Array>,
      readMaxBytes,
      Number.isFinite(length) ? length : null,
    );
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.ResourceExhausted) return "too-large";
    throw error;
  }
}
