import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendFileRange } from "./send-file.js";

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let folder: string;
let file: string;
const content = randomBytes(5 * MiB + 123);
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "send-file-"));
  file = join(folder, "content");
  await writeFile(file, content);
});
afterAll(() => rm(folder, { recursive: true, force: true }));

/** A destination that takes each chunk only some time after it was written, as a slow socket does. */
function slowDestination(received: Buffer[]): Writable {
  return new Writable({
    highWaterMark: 4 * MiB,
    write(chunk: Buffer, _encoding, callback) {
      setTimeout(() => {
        received.push(Buffer.from(chunk));
        callback();
      }, 2);
    },
  });
}

describe("sendFileRange", () => {
  it("sends every byte in order to a destination that takes its chunks late, while other sends share the pool", async () => {
    const sends = [
      { start: 0, end: content.length },
      { start: 1000, end: 3 * MiB + 7 },
      { start: 0, end: content.length },
    ].map(async ({ start, end }) => {
      const received: Buffer[] = [];
      await sendFileRange(await open(file, "r"), start, end, slowDestination(received));
      expect(sha256(Buffer.concat(received))).toBe(sha256(content.subarray(start, end)));
    });
    await Promise.all(sends);
  });

  it("stops, closing the file, when the destination closes without ever taking a write", async () => {
    const handle = await open(file, "r");
    const stuck = new Writable({ write() {} });
    const sent = sendFileRange(handle, 0, content.length, stuck);
    setTimeout(() => stuck.destroy(), 20);
    await expect(sent).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    await expect(handle.stat()).rejects.toThrow(/closed/);
  });
});
