import { readBodyUpTo } from "../../../net/capped-body.js";
import { ToolError } from "./tool-error.js";
import type { MemoryReservation } from "./tool.js";

/**
 * Reads a response body, refusing it once it passes `maxBytes` (and before reading when the
 * declared content-length already does), so a huge or endless answer cannot exhaust the server's
 * memory. `what` names the body in the error (`http.request: the response body`). Each chunk is
 * counted against the thread's memory limit (`memory`) before it is kept; when it does not fit,
 * the rest of the body is not read and what undici buffered is released.
 */
export async function readCappedBody(
  response: Response,
  maxBytes: number,
  what: string,
  memory?: MemoryReservation,
): Promise<Uint8Array> {
  const take =
    memory &&
    ((bytes: number) => {
      try {
        memory.reserve(bytes);
      } catch (error) {
        throw new ToolError(
          "failed",
          `${what} was not read in full: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    });
  return readBodyUpTo(response, maxBytes, (detail) => tooLarge(what, maxBytes, detail), take);
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

function tooLarge(what: string, maxBytes: number, detail: string): ToolError {
  return new ToolError("failed", `${what} is larger than the limit of ${formatBytes(maxBytes)} (it ${detail})`);
}
