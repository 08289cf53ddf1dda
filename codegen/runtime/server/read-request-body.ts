import { readAllBytes, type UniversalServerRequest } from "@connectrpc/connect/protocol";

const encoder = new TextEncoder();

/**
 * The whole request body, held to `readMaxBytes`.
 *
 * @throws ConnectError RESOURCE_EXHAUSTED when the body is larger.
 */
export async function readRequestBody(request: UniversalServerRequest, readMaxBytes: number): Promise<Uint8Array> {
  if (!(Symbol.asyncIterator in Object(request.body))) {
    // A framework already parsed the JSON body.
    return encoder.encode(JSON.stringify(request.body));
  }
  const length = Number(request.header.get("content-length") ?? Number.NaN);
  return readAllBytes(request.body as AsyncIterable<Uint8Array>, readMaxBytes, Number.isFinite(length) ? length : null);
}
