import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// 8 × 8 nested iterations at maxConcurrency 64, each fetching a 9 MiB body from a loopback server,
// took a server from 640 MiB to 2.6 GB and left it there. On a server of its own (its memory is
// measured alone), with the default limits: the thread fails with an error naming the step and
// the memory limit, the server's resident memory stays within bounds while it runs, and comes
// back near its idle level once the thread has failed.
const MiB = 1024 * 1024;
const TERMINAL = new Set([ThreadStatus.COMPLETED, ThreadStatus.FAILED, ThreadStatus.CANCELLED]);
const script = `dsl: script/1
inputs: {type: object, properties: {url: {type: string}, rows: {type: array}, columns: {type: array}}}
steps:
  - id: rows
    iterate:
      over: inputs.rows
      as: row
      maxConcurrency: 64
      steps:
        - id: columns
          iterate:
            over: inputs.columns
            as: column
            maxConcurrency: 64
            steps:
              - {id: fetch, execute: {tool: http.request, input: {url: "\${inputs.url}", timeout: 2m}}}
`;

let server: StartedServer;
let origin: Server;
let client: PlatformClient;
let url: string;

beforeAll(async () => {
  const body = Buffer.alloc(9 * MiB, "a");
  origin = createServer((request, response) => {
    if (request.url !== "/body") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/plain", "content-length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/body`;
  server = await startPlatformServer(["--allow-private-network=true"]);
  const { apiKey } = (await runAdmin(server.dataDir, ["create-org", "memory"])).json as { apiKey: string };
  client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "memory" });
  await client.script.createScript({ name: "fan-out", source: script });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => origin?.close(resolve));
});

async function residentMiB(): Promise<number> {
  const status = await readFile(`/proc/${server.process.pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

async function runToEnd(input: object): Promise<string> {
  const { threadId } = await client.script.createThread({
    scriptName: "fan-out",
    inputJson: JSON.stringify({ url, ...input }),
  });
  const deadline = Date.now() + 90_000;
  while (!TERMINAL.has((await client.script.getThread({ threadId })).status)) {
    if (Date.now() > deadline) throw new Error(`thread ${threadId} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return threadId;
}

it("fails an 8 × 8 fan-out of 9 MiB bodies at the thread's memory limit, and gives the memory back", async () => {
  // The idle level: after a small run of the same script, so that what is loaded on first use counts as idle.
  await runToEnd({ rows: [0], columns: [0] });
  const idle = await residentMiB();

  let peak = idle;
  const sampler = setInterval(
    () =>
      void residentMiB().then(
        (mib) => (peak = Math.max(peak, mib)),
        () => {},
      ),
    25,
  );
  const threadId = await runToEnd({ rows: [0, 1, 2, 3, 4, 5, 6, 7], columns: [0, 1, 2, 3, 4, 5, 6, 7] });
  clearInterval(sampler);

  const thread = await client.script.getThread({ threadId });
  expect(thread.status).toBe(ThreadStatus.FAILED);
  const limit = `exceeded the thread's memory limit of 128 MiB: (reading [0-9.]+ KiB more|its output of 9 MiB) on top of [0-9.]+ MiB already held or being read by the thread`;
  expect(thread.error).toMatch(
    new RegExp(
      `^(http\\.request: the response body of GET ${url} was not read in full: )?step "fetch" \\(0\\.\\d\\.0\\.\\d\\.0\\) ${limit}$`,
    ),
  );

  // The V8 heap does not shrink at once: wait, with a deadline, for the level to come back near idle.
  const deadline = Date.now() + 20_000;
  let after = await residentMiB();
  while (after > idle + 350 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    after = await residentMiB();
  }
  console.info(
    `server RSS: ${idle.toFixed(0)} MiB idle, ${peak.toFixed(0)} MiB at the peak, ${after.toFixed(0)} MiB after the thread failed`,
  );
  expect(peak).toBeLessThan(idle + 1024);
  expect(after).toBeLessThan(idle + 350);
}, 120_000);
