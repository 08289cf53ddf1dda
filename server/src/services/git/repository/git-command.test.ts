import { afterAll, describe, expect, test } from "vitest";
import { FixtureRepository } from "./fixture-repository.js";
import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";

const repo = new FixtureRepository();
repo.write({ "big.txt": "x".repeat(100_000) });
repo.commit("big");
afterAll(() => repo.remove());

describe("runGit", () => {
  test("runs on the bare repository and returns stdout", async () => {
    const result = await runGit(repo.gitDir, ["rev-parse", "--is-bare-repository"]);
    expect(result).toMatchObject({ exitCode: 0, truncated: false });
    expect(result.stdout.toString().trim()).toBe("true");
  });

  test("stops reading past the output cap, kills git and says truncated", async () => {
    const result = await runGit(repo.gitDir, ["cat-file", "blob", "HEAD:big.txt"], { maxOutputBytes: 10 });
    expect(result.truncated).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.stdout.toString()).toBe("xxxxxxxxxx");
  });

  test("kills git and whatever it started after the time budget", async () => {
    // A shell alias that sleeps stands in for any slow command; the whole process group must go.
    const started = Date.now();
    const run = runGit(repo.gitDir, ["-c", "alias.slow=!sleep 5", "slow"], { timeoutMs: 200 });
    await expect(run).rejects.toMatchObject({ kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test("sees no user or system configuration and no GIT_* variable of the server", async () => {
    const before = process.env.GIT_CONFIG_PARAMETERS;
    process.env.GIT_CONFIG_PARAMETERS = "'user.name'='leaked'";
    try {
      const result = await runGit(repo.gitDir, ["config", "user.name"]);
      expect(result.exitCode).toBe(1);
      expect(result.stdout.toString()).toBe("");
    } finally {
      if (before === undefined) delete process.env.GIT_CONFIG_PARAMETERS;
      else process.env.GIT_CONFIG_PARAMETERS = before;
    }
    const hooks = await runGitOk(repo.gitDir, ["config", "core.hooksPath"]);
    expect(hooks.trim()).toBe("/dev/null");
  });

  test("passes input on stdin and environment additions", async () => {
    const sha = await runGitOk(repo.gitDir, ["hash-object", "--stdin"], { input: "abc" });
    expect(sha.trim()).toBe("f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f");
  });

  test("a failing command is `failed` with git's words kept out of the message", async () => {
    const error = await runGitOk(repo.gitDir, ["cat-file", "-p", "nope"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitRepositoryError);
    expect(error).toMatchObject({ kind: "failed", message: "git cat-file failed" });
    expect((error as GitRepositoryError).detail).toContain("nope");
  });
});
