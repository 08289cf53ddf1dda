import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGitClient } from "../../gen/openapi/git/client.js";
import { childProcessesRunning } from "../../server/test/child-processes.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The server starts git through a helper process (server/src/services/git/launcher): losing the
// helper must not lose the gateway, and losing the server must not leave the helper behind.
describe("the git launcher process", () => {
  let server: StartedServer;
  let advertisement: () => Promise<Response>;

  beforeAll(async () => {
    server = await startPlatformServer();
    const created = await runAdmin(server.dataDir, ["create-org", "launcher"], {
      DATABASE_URL: server.databaseUrl ?? "",
    });
    const { apiKey } = created.json as { apiKey: string };
    const client = createGitClient({ baseUrl: server.urls.git!, token: apiKey });
    const { body } = await client.createRepository({ body: { name: "launched" } });
    const authorization = `Basic ${Buffer.from(`x:${apiKey}`).toString("base64")}`;
    advertisement = () =>
      fetch(`${server.urls.git}/${body.repo_id}.git/info/refs?service=git-receive-pack`, {
        headers: { authorization },
      });
  }, 120_000);
  afterAll(async () => {
    if (server.process.exitCode === null) server.process.kill("SIGKILL");
  });

  it("is started again when it dies, and exits when the server is killed", async () => {
    const pid = server.process.pid!;
    const [first] = childProcessesRunning(pid, "git-launcher.mjs");
    expect(first).toBeDefined();
    process.kill(first!, "SIGKILL");
    await waitFor(() => !alive(first!), "the launcher to die");
    const answer = await advertisement();
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("report-status");
    const [second] = childProcessesRunning(pid, "git-launcher.mjs");
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    server.process.kill("SIGKILL");
    await waitFor(() => !alive(second!), "the launcher to exit after the server");
  }, 60_000);
});
