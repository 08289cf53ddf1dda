import { createCipheriv, createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { parseSse } from "../../codegen/runtime/stream-framing/sse.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// A thread whose final output is about 40 MB of JSON, read back byte for byte through the binary:
// four ~10 MB bodies fetched with http.request from a local server, streamed in chunks over
// Connect (the SDK) and over the HTTP route (server-sent events), and capped by GetThreadResult.
// The file runs its own server: its memory is measured alone, and the other files' servers
// are spared the load.
const BODIES = 4;
const CHARACTERS_PER_BODY = 9_800_000;
const MiB = 1024 * 1024;

// Pseudo-random text from a seed: corruption, a lost or a repeated chunk anywhere shows up in
// the comparison. Two multi-byte characters put UTF-8 sequences across chunk boundaries.
const ALPHABET = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ123456789 é€"].map((c) => Buffer.from(c));

function pseudoRandomText(seed: number, characters: number): Buffer {
  const key = createHash("sha256").update(`large-output-${seed}`).digest().subarray(0, 16);
  const noise = createCipheriv("aes-128-ctr", key, Buffer.alloc(16)).update(Buffer.alloc(characters));
  const text = Buffer.alloc(characters * 3);
  let at = 0;
  for (let i = 0; i < noise.length; i++) {
    const character = ALPHABET[noise[i]! & 63]!;
    for (let j = 0; j < character.length; j++) text[at++] = character[j]!;
  }
  return text.subarray(0, at);
}

const script = `dsl: script/1
description: Fetches large bodies and outputs them all.
inputs:
  type: object
  required: [urls]
  properties:
    urls: {type: array, items: {type: string}}
outputs:
  type: object
  required: [bodies]
  properties:
    bodies: {type: array, items: {type: string}}
steps:
  - id: fetch
    iterate:
      over: inputs.urls
      as: url
      maxConcurrency: 2
      steps:
        - {id: get, execute: {tool: http.request, input: {url: "\${url}", timeout: 1m}}}
output:
  bodies: "\${steps.fetch.output.map(r, r.body)}"
`;

let server: StartedServer;
let client: PlatformClient;
let headers: Record<string, string>;
let origin: Server;
let bodies: Buffer[];
let expected: Buffer;
let threadId: string;
let baseline: RssSample | undefined;
let whileRunning: RssSample | undefined;

beforeAll(async () => {
  server = await startPlatformServer(["--allow-private-network=true"]);
  baseline = await sampleServerRss().stop();
  const created = await runAdmin(server.dataDir, ["create-org", "large"]);
  const { apiKey } = created.json as { apiKey: string };
  client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "large" });
  headers = { authorization: `Bearer ${apiKey}`, "x-organization-name": "large" };
  bodies = Array.from({ length: BODIES }, (_, i) => pseudoRandomText(i, CHARACTERS_PER_BODY));
  // What the server's output must be, byte for byte: the list of bodies as compact JSON.
  expected = Buffer.from(JSON.stringify({ bodies: bodies.map((b) => b.toString()) }));
  origin = createServer((req, res) => {
    const body = bodies[Number(/^\/body\/(\d+)$/.exec(req.url ?? "")?.[1] ?? -1)];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  const { port } = origin.address() as AddressInfo;

  await client.script.createScript({ name: "gather", source: script });
  const urls = bodies.map((_, i) => `http://127.0.0.1:${port}/body/${i}`);
  const running = sampleServerRss();
  ({ threadId } = await client.script.createThread({ scriptName: "gather", inputJson: JSON.stringify({ urls }) }));
  let last = "";
  for await (const event of client.script.watchThread({ threadId })) last = event.event.case ?? "";
  whileRunning = await running.stop();
  const thread = await client.script.getThread({ threadId });
  expect([last, thread.status, thread.error]).toEqual(["completed", ThreadStatus.COMPLETED, ""]);
  // A server start, an admin command and a 40 MB thread on the embedded database: minutes on a
  // loaded 2-core machine, seconds otherwise.
}, 180_000);

afterAll(async () => {
  await new Promise((resolve) => origin?.close(resolve));
  await server?.stop();
});

it("caps the unary result at 4 MiB and says the output is truncated", async () => {
  const result = await client.script.getThreadResult({ threadId, outputOnly: true });
  expect(result.outputTruncated).toBe(true);
  expect(result.outputTotalBytes).toBe(BigInt(expected.length));
  expect(result.outputData.length).toBe(4 * MiB);
  expect(Buffer.from(result.outputData).equals(expected.subarray(0, 4 * MiB))).toBe(true);
});

it("streams the output byte-exact over Connect in chunks of max_chunk_bytes", async () => {
  const rss = sampleServerRss();
  const messages = [];
  for await (const message of client.script.streamThreadResult({ threadId, maxChunkBytes: MiB }))
    messages.push(message);
  report("Connect, 1 MiB chunks", await rss.stop());

  const [first, ...rest] = messages;
  const chunkCount = Math.ceil(expected.length / MiB);
  expect(first?.chunk).toEqual({
    case: "meta",
    value: expect.objectContaining({
      status: ThreadStatus.COMPLETED,
      totalBytes: BigInt(expected.length),
      totalChunks: chunkCount,
    }),
  });
  const chunks = rest.map((message) => {
    if (message.chunk.case !== "output") throw new Error(`expected an output chunk, got ${message.chunk.case}`);
    return message.chunk.value;
  });
  expect(chunks.map((c) => c.chunkIndex)).toEqual([...Array(chunkCount).keys()]);
  expect(chunks.map((c) => c.isFinal)).toEqual([...Array(chunkCount).keys()].map((i) => i === chunkCount - 1));
  expect(chunks.slice(0, -1).every((c) => c.data.length === MiB && c.totalBytes === BigInt(expected.length))).toBe(
    true,
  );
  expect(chunks.at(-1)!.data.length).toBe(expected.length - (chunkCount - 1) * MiB);
  expect(reassemble(chunks.map((c) => ({ index: c.chunkIndex, data: c.data }))).equals(expected)).toBe(true);
});

it("streams the output byte-exact as server-sent events to a plain HTTP client", async () => {
  const rss = sampleServerRss();
  const response = await request(`${server.urls.api}/v1/script/threads/${threadId}/result/stream`, {
    headers: headers,
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers["content-type"]).toBe("text/event-stream");
  const events: OutputEvent[] = [];
  for await (const event of parseSse(response.body)) {
    expect(event.event).toBe("message");
    events.push(JSON.parse(event.data) as OutputEvent);
  }
  report("HTTP server-sent events, default chunks", await rss.stop());

  // The default chunk is 2 MiB; every field is written, int64 as strings, bytes as base64.
  const chunkBytes = 2 * MiB;
  const chunkCount = Math.ceil(expected.length / chunkBytes);
  const [first, ...rest] = events;
  expect(first).toEqual({
    threadId,
    meta: { status: "THREAD_STATUS_COMPLETED", totalBytes: String(expected.length), totalChunks: chunkCount },
  });
  const chunks = rest.map((event) => {
    expect(event.threadId).toBe(threadId);
    return { ...event.output!, data: Buffer.from(event.output!.data, "base64") };
  });
  expect(chunks.map((c) => c.chunkIndex)).toEqual([...Array(chunkCount).keys()]);
  expect(chunks.map((c) => c.isFinal)).toEqual([...Array(chunkCount).keys()].map((i) => i === chunkCount - 1));
  expect(chunks.every((c) => c.totalBytes === String(expected.length))).toBe(true);
  expect(chunks.slice(0, -1).every((c) => c.data.length === chunkBytes)).toBe(true);
  expect(reassemble(chunks.map((c) => ({ index: c.chunkIndex, data: c.data }))).equals(expected)).toBe(true);
});

interface OutputEvent {
  threadId: string;
  meta?: { status: string; totalBytes: string; totalChunks: number };
  output?: { data: string; totalBytes: string; chunkIndex: number; isFinal: boolean };
}

/** The client's side of the contract: concatenate the data in chunk_index order. */
function reassemble(chunks: { index: number; data: Uint8Array }[]): Buffer {
  return Buffer.concat([...chunks].sort((a, b) => a.index - b.index).map((c) => c.data));
}

interface RssSample {
  readonly peakSampledMiB: number;
  readonly highWaterMiB: number;
}

/** Samples the server's resident memory (Linux /proc) until `stop`: the peak seen, and the process's high-water mark. */
function sampleServerRss(): { stop(): Promise<RssSample | undefined> } {
  let peak = 0;
  const statusOf = () => readFile(`/proc/${server.process.pid}/status`, "utf8").catch(() => "");
  const kib = (status: string, field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  const timer = setInterval(() => void statusOf().then((status) => (peak = Math.max(peak, kib(status, "VmRSS")))), 25);
  return {
    async stop() {
      clearInterval(timer);
      const status = await statusOf();
      if (status === "") return undefined;
      return {
        peakSampledMiB: Math.round(Math.max(peak, kib(status, "VmRSS")) / 1024),
        highWaterMiB: Math.round(kib(status, "VmHWM") / 1024),
      };
    },
  };
}

function report(what: string, rss: RssSample | undefined): void {
  if (!rss) return;
  console.info(
    `${what}: server RSS ${baseline?.peakSampledMiB} MiB idle, peak ${whileRunning?.peakSampledMiB} MiB while the thread ran, ` +
      `peak ${rss.peakSampledMiB} MiB while streaming (high-water mark ${rss.highWaterMiB} MiB)`,
  );
}
