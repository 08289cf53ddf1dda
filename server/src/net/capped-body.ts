/**
 * Reads a response body, refusing it once it passes `maxBytes` (and before reading when the
 * declared content-length already does), so a huge or endless answer cannot exhaust the server's
 * memory. `refuse(detail)` makes the error thrown (`detail` says what was seen); `take(bytes)` is
 * called for each chunk before it is kept and may throw to stop the read. Whatever stops the read
 * cancels the rest of the body, so what the connection buffered is released.
 */
export async function readBodyUpTo(
  response: Response,
  maxBytes: number,
  refuse: (detail: string) => Error,
  take?: (bytes: number) => void,
): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw refuse(`declares ${declared} bytes`);
  }
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw refuse(`passed ${maxBytes} bytes`);
      take?.(value.byteLength);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  return Buffer.concat(chunks, total);
}
