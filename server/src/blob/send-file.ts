import type { FileHandle } from "node:fs/promises";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";

/** Bytes per read of a file being sent. */
const SEND_CHUNK_BYTES = 1024 * 1024;
/** Idle send buffers kept for the next download; more are allocated when more downloads run at once. */
const IDLE_BUFFERS_KEPT = 8;

const idleBuffers: Buffer[] = [];
const takeBuffer = () => idleBuffers.pop() ?? Buffer.allocUnsafeSlow(SEND_CHUNK_BYTES);
const giveBack = (buffer: Buffer) => {
  if (idleBuffers.length < IDLE_BUFFERS_KEPT) idleBuffers.push(buffer);
};

/**
 * Writes the bytes of `handle` from `start` up to `end` (excluded) to `destination` and ends it,
 * through two buffers taken from a shared pool: one is read into while the other is being written,
 * and a buffer is read into again only after the destination's write callback says it took the
 * bytes. A fresh buffer per chunk would be garbage once sent, and on a large heap the collections
 * that external memory triggers cost more CPU than the copying does.
 *
 * A response whose connection was destroyed may never call a write's callback, so every wait
 * also ends when the destination closes; a buffer still held by such a write is not returned to
 * the pool.
 */
export async function sendFileRange(
  handle: FileHandle,
  start: number,
  end: number,
  destination: Writable,
): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    if (destination.closed || destination.destroyed) resolve();
    else destination.once("close", () => resolve());
  });
  let failure: Error | undefined;
  const slots: { buffer: Buffer; written: Promise<boolean> }[] = [
    { buffer: takeBuffer(), written: Promise.resolve(true) },
    { buffer: takeBuffer(), written: Promise.resolve(true) },
  ];
  const write = (chunk: Buffer) =>
    new Promise<boolean>((resolve) =>
      destination.write(chunk, (error) => {
        if (error) failure ??= error;
        resolve(!error);
      }),
    );
  // Resolves true once the slot's buffer was taken, false when the destination closed or failed first.
  const free = (slot: (typeof slots)[number]) =>
    Promise.race([slot.written, closed.then(() => false)]).then((taken) => taken && !failure);
  let usable = true;
  try {
    for (let position = start, turn = 0; position < end; turn ^= 1) {
      const slot = slots[turn]!;
      if (!(await free(slot))) {
        usable = false;
        break;
      }
      const { bytesRead } = await handle.read(slot.buffer, 0, Math.min(SEND_CHUNK_BYTES, end - position), position);
      if (bytesRead === 0) throw new Error("the file ended before the range it was sent for");
      position += bytesRead;
      slot.written = write(bytesRead === SEND_CHUNK_BYTES ? slot.buffer : slot.buffer.subarray(0, bytesRead));
    }
    if (usable) {
      const taken = await Promise.all(slots.map(free));
      usable = taken.every(Boolean);
    }
    if (!usable) {
      // A write fails only because the destination went away (a reset, a hang-up): one error for all of them.
      throw Object.assign(new Error("the destination closed before the file was sent", { cause: failure }), {
        code: "ERR_STREAM_PREMATURE_CLOSE",
      });
    }
    for (const slot of slots) giveBack(slot.buffer);
    destination.end();
    await finished(destination);
  } finally {
    await handle.close();
  }
}
