import type { NodeResponse } from "../../../transport/plane-handler.js";

/** Writes a whole response: status, headers and an optional body (JSON when not bytes or text). */
export function answer(
  res: NodeResponse,
  status: number,
  headers: Record<string, string | number> = {},
  body?: string | Uint8Array | object,
): void {
  const bytes =
    body === undefined
      ? undefined
      : typeof body === "string" || body instanceof Uint8Array
        ? body
        : JSON.stringify(body);
  const all: Record<string, string | number> = { ...headers };
  if (bytes !== undefined && all["content-length"] === undefined) all["content-length"] = Buffer.byteLength(bytes);
  if (bytes === undefined && all["content-length"] === undefined) all["content-length"] = 0;
  res.writeHead(status, all);
  if (bytes === undefined) res.end();
  else res.end(bytes);
}

/** The request body as chunks, for streaming it on without holding it. */
export function bodyChunks(req: AsyncIterable<unknown>): AsyncIterable<Uint8Array> {
  return req as AsyncIterable<Uint8Array>;
}

/** The whole request body, refused past `limit` bytes (manifests are small). */
export async function readBody(req: AsyncIterable<unknown>, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
