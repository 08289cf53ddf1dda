import { ToolError } from "./tool-error.js";

/**
 * Reads a response body, refusing it once it passes `maxBytes` (and before reading when the
 * declared content-length already does), so a huge or endless answer cannot exhaust the server's
 * memory. `what` names the body in the error (`http.request: the response body`).
 */
export async function readCappedBody(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(what, maxBytes, `declares ${declared} bytes`);
  }
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(what, maxBytes, `passed ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

function tooLarge(what: string, maxBytes: number, detail: string): ToolError {
  return new ToolError("failed", `${what} is larger than the limit of ${formatBytes(maxBytes)} (it ${detail})`);
}
