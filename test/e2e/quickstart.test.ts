import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { repoRoot } from "./platform-server.js";
import { apiUrl, createOrganization } from "./shared-server.js";

// examples/quickstart runs against a live server exactly as its header comment says.
it("runs the quickstart example to the end", async () => {
  const org = await createOrganization("quick");
  const child = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "examples/quickstart/quickstart.ts")], {
    cwd: join(repoRoot, "examples/quickstart"),
    env: { ...process.env, PLATFORM_API_URL: apiUrl(), PLATFORM_TOKEN: org.token, PLATFORM_ORG: org.name },
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(output).toMatch(/platform .* is ok/);
  expect(output).toMatch(/environment: FEATURE_X=on LOG_LEVEL=info REGION=eu-west/);
  expect(output).toMatch(/secrets: github \(git_secret\)/);
  expect(output).toMatch(/GetEnvVar MISSING: NotFound/);
  expect(code).toBe(0);
});
