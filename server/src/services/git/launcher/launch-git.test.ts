import { execFile, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { childProcessesRunning } from "../../../../test/child-processes.js";
import { LAUNCHER_SCRIPT, launchGit, type LaunchedGit } from "./launch-git.js";

async function output(git: LaunchedGit): Promise<{ stdout: Buffer; stderr: string; code: number | null }> {
  const read = async (stream: NodeJS.ReadableStream | null) => {
    const chunks: Buffer[] = [];
    if (stream) for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const [stdout, stderr] = await Promise.all([read(git.stdout), read(git.stderr)]);
  return { stdout, stderr: stderr.toString(), code: await git.closed };
}

const run = promisify(execFile);
const launcherPids = () => childProcessesRunning(process.pid, "git-launcher.mjs");

describe("launchGit", () => {
  test("connects git's stdin and stdout to the caller and passes every byte both ways", async () => {
    const input = randomBytes(3 * 1024 * 1024);
    const git = await launchGit({ args: ["hash-object", "--stdin", "--literally"], stdio: [true, true, true] });
    git.stdin!.end(input);
    const { stdout, code } = await output(git);
    expect(code).toBe(0);
    const expected = await launchGit({ args: ["hash-object", "--stdin"], stdio: [true, true, false] });
    expected.stdin!.end(input);
    expect(stdout.toString()).toBe((await output(expected)).stdout.toString());
    expect(stdout.toString()).toMatch(/^[0-9a-f]{40}\n$/);
  });

  test("gives the exit code and what git wrote to stderr", async () => {
    const git = await launchGit({ args: ["rev-parse", "--git-dir"], cwd: "/", stdio: [false, true, true] });
    const { stderr, code } = await output(git);
    expect(code).toBe(128);
    expect(stderr).toContain("not a git repository");
  });

  test("keeps a process with nothing else to do alive until git has answered", async () => {
    // A fresh process whose only work is one git: nothing but the launcher's channel holds it open.
    const script = `
      const { launchGit } = await import(${JSON.stringify(new URL("./launch-git.ts", import.meta.url).href)});
      const git = await launchGit({ args: ["--version"], env: { PATH: process.env.PATH }, stdio: [false, true, false] });
      for await (const chunk of git.stdout) process.stdout.write(chunk);
      process.stdout.write("exit " + (await git.closed) + "\\n");
    `;
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
    expect(stdout).toMatch(/^git version .*\nexit 0\n$/);
  });

  test("builds git's environment from nothing: neither the server's variables nor the caller's override it", async () => {
    const work = await mkdtemp(join(tmpdir(), "launch-env-"));
    const before = process.env.GIT_CONFIG_PARAMETERS;
    process.env.GIT_CONFIG_PARAMETERS = "'user.name'='from the server'";
    try {
      await writeFile(join(work, "config"), "[user]\n\tname = from the caller\n");
      const git = await launchGit({
        args: ["config", "user.name"],
        env: { GIT_CONFIG_GLOBAL: join(work, "config"), HOME: work },
        stdio: [false, true, false],
      });
      const { stdout, code } = await output(git);
      expect({ stdout: stdout.toString(), code }).toEqual({ stdout: "", code: 1 });
      const printed = await launchGit({
        args: ["var", "GIT_EDITOR"],
        env: { GIT_EDITOR: "kept" },
        stdio: [false, true, false],
      });
      expect((await output(printed)).stdout.toString()).toBe("kept\n");
    } finally {
      if (before === undefined) delete process.env.GIT_CONFIG_PARAMETERS;
      else process.env.GIT_CONFIG_PARAMETERS = before;
      await rm(work, { recursive: true, force: true });
    }
  });

  test("refuses when git cannot be started", async () => {
    await expect(launchGit({ args: ["--version"], cwd: "/nonexistent", stdio: [false, true, false] })).rejects.toThrow(
      /git could not be started/,
    );
  });

  test("a kill ends git and what it started, and the streams end", async () => {
    const git = await launchGit({ args: ["-c", "alias.slow=!sleep 5", "slow"], stdio: [true, true, true] });
    const started = Date.now();
    git.kill("SIGKILL");
    const { code } = await output(git);
    expect(code).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("a launcher whose server went away while it started exits", async () => {
    const launcher = fork(LAUNCHER_SCRIPT, [], { execArgv: [], stdio: ["ignore", "ignore", "inherit", "ipc"] });
    // Gone before the launcher's module has even loaded.
    launcher.disconnect();
    const code = await new Promise((resolve) => launcher.once("exit", resolve));
    expect(code).toBe(0);
  });

  test("starts a new launcher when the one it had died, and fails only what was running", async () => {
    const running = await launchGit({ args: ["-c", "alias.slow=!sleep 5", "slow"], stdio: [true, true, true] });
    const [launcher] = launcherPids();
    expect(launcher).toBeDefined();
    process.kill(launcher!, "SIGKILL");
    expect(await running.closed).toBeNull();
    const git = await launchGit({ args: ["--version"], stdio: [false, true, false] });
    expect((await output(git)).stdout.toString()).toMatch(/^git version/);
    expect(launcherPids()).not.toContain(launcher);
  });
});
