import { runGitOk } from "./git-command.js";

/** The branch record. */
export interface Branch {
  name: string;
  sha: string;
  is_default: boolean;
}

/** Every branch, sorted by name, with the commit it points to; `defaultBranch` is a short name. */
export async function listBranches(gitDir: string, defaultBranch: string): Promise<Branch[]> {
  // Ref names cannot hold control characters, so a newline and a NUL are safe separators.
  const output = await runGitOk(gitDir, [
    "for-each-ref",
    "--sort=refname",
    "--format=%(refname:lstrip=2)%00%(objectname)",
    "refs/heads/",
  ]);
  return output
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [name = "", sha = ""] = line.split("\0");
      return { name, sha, is_default: name === defaultBranch };
    });
}
