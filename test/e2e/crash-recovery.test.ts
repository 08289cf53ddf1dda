import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient } from "../../sdk/src/index.js";
import {
  freshDatabase,
  runAdmin,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// kill -9 of the server in the middle of a thread: after a restart on the same data, the thread
// completes, and no step that had completed runs again.
let dataDir: string;
let database: TestPostgresDatabase | undefined;
let server: StartedServer | undefined;
afterAll(async () => {
  if (server?.process.exitCode === null) await server.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it("resumes a thread after the server is killed, without re-running completed steps", async () => {
  dataDir = await mkdtemp(join(tmpdir(), "platform-crash-"));
  database = await freshDatabase();
  const lease = ["--thread-lease-ms", "2000"];
  server = await startPlatformServer(lease, { dataDir, database });
  const org = await runAdmin(dataDir, ["create-org", "crashco"]);
  const { apiKey } = org.json as { apiKey: string };
  const client = () => createPlatformClient({ apiUrl: server!.urls.api!, token: apiKey, organization: "crashco" });
  await client().script.createScript({
    name: "long",
    source: `dsl: script/1
steps:
  - {id: first, execute: {tool: template.render, input: {template: "one"}}}
  - {id: nap, execute: {tool: sleep, input: {duration: 3s}}}
  - {id: last, execute: {tool: template.render, input: {template: "three"}}}
output: "\${steps.first.output.text} \${steps.last.output.text}"
`,
  });
  const { threadId } = await client().script.createThread({ scriptName: "long" });
  for (let i = 0; ; i++) {
    const thread = await client().script.getThread({ threadId });
    if (thread.currentStepPath === "1") break;
    if (i > 200) throw new Error(`the thread never reached the sleep: ${thread.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  server.process.kill("SIGKILL");
  await new Promise((resolve) => server!.process.once("exit", resolve));
  server = await startPlatformServer(lease, { dataDir, database });

  let thread;
  for (let i = 0; ; i++) {
    thread = await client().script.getThread({ threadId });
    if (thread.status === ThreadStatus.COMPLETED || thread.status === ThreadStatus.FAILED) break;
    if (i > 400) throw new Error(`the thread did not finish after the restart: ${thread.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);
  const result = await client().script.getThreadResult({ threadId });
  expect(JSON.parse(new TextDecoder().decode(result.outputData))).toBe("one three");
  const started: string[] = [];
  const watch = client().script.watchThread({ threadId });
  for await (const event of watch) if (event.event.case === "stepStarted") started.push(event.event.value.stepPath);
  // The first step completed before the kill: started once. The sleep was in flight: it ran again.
  expect(started.filter((path) => path === "0")).toHaveLength(1);
  expect(started.filter((path) => path === "2")).toHaveLength(1);
});
