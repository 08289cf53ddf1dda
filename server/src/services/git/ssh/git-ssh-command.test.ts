import { describe, expect, it } from "vitest";
import { parseGitSshCommand } from "./git-ssh-command.js";

const ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

describe("parseGitSshCommand", () => {
  it("reads the id and name forms, quoted or not, with or without the leading slash", () => {
    const byId = { service: "git-upload-pack", repo: { kind: "id", repoId: ID } };
    expect(parseGitSshCommand(`git-upload-pack '${ID}.git'`)).toEqual(byId);
    expect(parseGitSshCommand(`git-upload-pack '/${ID}.git'`)).toEqual(byId);
    expect(parseGitSshCommand(`git-upload-pack "/${ID.toUpperCase()}.git"`)).toEqual(byId);
    expect(parseGitSshCommand(`git-receive-pack acme/site.git`)).toEqual({
      service: "git-receive-pack",
      repo: { kind: "name", orgSlug: "acme", name: "site" },
    });
  });

  it("refuses other commands, climbing paths and broken quoting", () => {
    for (const command of [
      "sh -c id",
      `git-upload-archive '${ID}.git'`,
      "git-upload-pack '../etc.git'",
      "git-upload-pack 'a/../b.git'",
      "git-upload-pack 'a/b/c.git'",
      "git-upload-pack '.hidden/x.git'",
      `git-upload-pack '${ID}.git`,
      `git-upload-pack '${ID}'`,
      "git-upload-pack 'a b.git'",
      `git-upload-pack '${ID}.git'; id`,
    ]) {
      expect(parseGitSshCommand(command), command).toBeUndefined();
    }
  });
});
