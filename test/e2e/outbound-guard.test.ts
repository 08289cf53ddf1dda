import { networkInterfaces } from "node:os";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// The outbound guard through the binary, on a server started without --allow-private-network:
// http.request and callback_url refuse addresses that are not globally reachable and this
// machine's own addresses. Every address here is refused before a connection is attempted, so
// nothing leaves the machine.

/** Hosts as a URL writes them, each refused for the reason given. */
const REFUSED: Record<string, string> = {
  "198.18.0.1": "a benchmarking address",
  "203.0.113.7": "a documentation address",
  "[2001:db8::1]": "a documentation address",
  "[64:ff9b::a00:1]": "a private address",
  "240.0.0.1": "a reserved address",
};
/** This machine's interface addresses other than loopback, when it has any. */
const OWN = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .filter((info) => !info.internal && !info.address.includes("%"))
  .map((info) => (info.family === "IPv6" ? `[${info.address}]` : info.address));

const fetcher = `dsl: script/1
inputs:
  type: object
  required: [url]
  properties:
    url: {type: string}
steps:
  - {id: get, execute: {tool: http.request, input: {url: "\${inputs.url}", timeout: 5s}}}
`;

let server: StartedServer;
let client: PlatformClient;
beforeAll(async () => {
  server = await startPlatformServer();
  const created = await runAdmin(server.dataDir, ["create-org", "guarded"]);
  const { apiKey } = created.json as { apiKey: string };
  client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "guarded" });
  await client.script.createScript({ name: "fetcher", source: fetcher });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

/** Runs the fetcher on `url` and answers the finished thread. */
async function fetchThread(url: string) {
  const { threadId } = await client.script.createThread({ scriptName: "fetcher", inputJson: JSON.stringify({ url }) });
  for await (const _event of client.script.watchThread({ threadId })); // the stream ends with the thread
  return client.script.getThread({ threadId });
}

describe("outbound requests on a server that keeps to the public internet", () => {
  it("fail an http.request step to a refused address with the reason", async () => {
    for (const [host, why] of Object.entries(REFUSED)) {
      const thread = await fetchThread(`http://${host}/data`);
      expect(thread.status, host).toBe(ThreadStatus.FAILED);
      expect(thread.error, host).toContain(`is ${why}, which this server does not connect to`);
    }
  });

  it.runIf(OWN.length > 0)("fail an http.request step to this machine's own interface address", async () => {
    for (const host of OWN) {
      const thread = await fetchThread(`http://${host}/data`);
      expect(thread.status, host).toBe(ThreadStatus.FAILED);
      expect(thread.error, host).toMatch(/, which this server does not connect to/);
    }
  });

  it("refuse a callback_url to a refused address when the thread is created", async () => {
    const threadCount = async () => (await client.script.listThreads({ pageSize: 500 })).threads.length;
    const before = await threadCount();
    for (const [host, why] of [...Object.entries(REFUSED), ...OWN.map((host) => [host, ""] as const)]) {
      const error = await client.script
        .createThread({
          scriptName: "fetcher",
          inputJson: '{"url": "https://example.com/"}',
          callbackUrl: `http://${host}/hook`,
        })
        .then(
          () => undefined,
          (thrown: unknown) => ConnectError.from(thrown),
        );
      expect(error?.code, host).toBe(Code.InvalidArgument);
      expect(error?.rawMessage, host).toMatch(
        new RegExp(`^callback_url: ".*" is ${why || ".*"}, which this server does not call$`),
      );
    }
    expect(await threadCount()).toBe(before);
  });
});
