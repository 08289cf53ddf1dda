import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The git CLI as the end-to-end tests run it: HOME is the test's own folder (its .gitconfig is
 * the only configuration read), no prompts, and a fixed author. Rejects on a non-zero exit.
 */
export function gitCli(home: string) {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Ada",
    GIT_AUTHOR_EMAIL: "ada@example.com",
    GIT_COMMITTER_NAME: "Ada",
    GIT_COMMITTER_EMAIL: "ada@example.com",
  };
  return (args: string[], cwd = home, extra: NodeJS.ProcessEnv = {}) =>
    run("git", args, { cwd, env: { ...env, ...extra }, maxBuffer: 16 * 1024 * 1024 });
}

/** GIT_SSH_COMMAND using only `keyFile`, trusting any host key (the tests' server makes a new one). */
export const sshWith = (keyFile: string) => ({
  GIT_SSH_COMMAND: `ssh -i ${keyFile} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
});
