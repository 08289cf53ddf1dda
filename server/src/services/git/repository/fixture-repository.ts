import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * A bare repository built with the git CLI for tests: commits are made through a separate scratch work
 * tree, so the repository under test stays bare like the ones the server hosts.
 */
export class FixtureRepository {
  readonly root = mkdtempSync(join(tmpdir(), "git-fixture-"));
  readonly gitDir = join(this.root, "repo.git");
  private readonly work = join(this.root, "work");
  private clock = 1_700_000_000;

  constructor() {
    mkdirSync(this.work);
    execFileSync("git", ["init", "--quiet", "--bare", "--initial-branch=main", this.gitDir], {
      env: this.env("@0 +0000"),
    });
  }

  /** Runs git on the repository (with the scratch work tree) and answers its trimmed stdout. */
  git(...args: string[]): string {
    return this.gitWithInput(undefined, ...args);
  }

  gitWithInput(input: string | undefined, ...args: string[]): string {
    this.clock += 60;
    const date = `@${this.clock} +0000`;
    return execFileSync("git", [`--git-dir=${this.gitDir}`, `--work-tree=${this.work}`, ...args], {
      cwd: this.work,
      input,
      encoding: "utf8",
      env: this.env(date),
    }).trim();
  }

  private env(date: string): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: this.root,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "Ada Lovelace",
      GIT_AUTHOR_EMAIL: "ada@example.com",
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: "Ada Lovelace",
      GIT_COMMITTER_EMAIL: "ada@example.com",
      GIT_COMMITTER_DATE: date,
    };
  }

  /** Writes files into the scratch work tree (a Buffer for binary content). */
  write(files: Record<string, string | Buffer>): this {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.work, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
    return this;
  }

  symlink(path: string, target: string): this {
    symlinkSync(target, join(this.work, path));
    return this;
  }

  /** Stages everything in the work tree and commits it on the checked-out branch; answers the commit id. */
  commit(message: string): string {
    this.git("add", "--all");
    this.git("commit", "--quiet", "--allow-empty", "-m", message);
    return this.git("rev-parse", "HEAD");
  }

  /** Checks a branch out into the scratch work tree (creating it at `from` when given). */
  checkout(branch: string, from?: string): this {
    if (from === undefined) this.git("checkout", "--quiet", "--force", branch);
    else this.git("checkout", "--quiet", "--force", "-b", branch, from);
    this.git("clean", "--quiet", "-fdx");
    return this;
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * The shared history most tests read:
 * main: c1 (files, symlink, binary, submodule, nested dirs; annotated tag v1) -> c2 (rename, edits;
 * lightweight tag v2) -> c3 (edits README line 1); feature from c2: two commits touching other files;
 * clash from c2: edits README line 1 differently.
 */
export function buildSampleRepository(): {
  repo: FixtureRepository;
  c1: string;
  c2: string;
  c3: string;
  feature: string;
  clash: string;
} {
  const repo = new FixtureRepository();
  const guide = Array.from({ length: 20 }, (_, i) => `guide line ${i + 1}`).join("\n") + "\n";
  repo.write({
    "README.md": "hello\nworld\n",
    "src/app.ts": "export const app = 1;\n",
    "src/lib/util.ts": "export const util = 2;\n",
    "docs/guide.md": guide,
    "image.bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff]),
    "café.txt": "naïve ☕\n",
  });
  repo.symlink("link", "README.md");
  // An empty directory is how an unpopulated submodule looks in a work tree; later `add --all` keeps it.
  mkdirSync(join(repo.root, "work", "vendor", "sub"), { recursive: true });
  repo.git("add", "--all");
  const submoduleCommit = "1234567890abcdef1234567890abcdef12345678";
  repo.git("update-index", "--add", "--cacheinfo", `160000,${submoduleCommit},vendor/sub`);
  const c1 = repo.commit("First commit\n\nWith a body.");
  repo.git("tag", "-a", "v1", "-m", "version one");

  repo.git("mv", "docs/guide.md", "docs/manual.md");
  repo.write({ "README.md": "hello\nworld\nagain\n", "image.bin": Buffer.from([0x00, 0x00, 0x01]) });
  const c2 = repo.commit("Rename the guide");
  repo.git("tag", "v2");

  repo.checkout("feature", c2);
  repo.write({ "feature.txt": "a feature\n" });
  repo.commit("Add the feature");
  repo.write({ "src/app.ts": "export const app = 1;\nexport const feature = true;\n" });
  const feature = repo.commit("Use the feature");

  repo.checkout("clash", c2);
  repo.write({ "README.md": "HELLO FROM CLASH\nworld\nagain\n" });
  const clash = repo.commit("Shout");

  repo.checkout("main");
  repo.write({ "README.md": "hello from main\nworld\nagain\n" });
  const c3 = repo.commit("Greet from main");
  return { repo, c1, c2, c3, feature, clash };
}
