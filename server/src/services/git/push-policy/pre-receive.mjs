// The push check git runs as its pre-receive hook (see README.md). Plain JavaScript, run by the
// server's Node.js in the hook's environment: stdin holds one `<old> <new> <ref>` line per ref the
// push moves, PLATFORM_PUSH_POLICY the repository's rules and quotas, and GIT_QUARANTINE_PATH the
// pushed objects. Exiting non-zero makes git refuse every ref of the push and drop the objects;
// what is written to stderr reaches the pushing client as `remote: ...` lines.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const ZERO = /^0+$/;

/** Bytes and packs under the quarantine directory: what the push adds to the repository. */
function incomingUsage(dir) {
  let bytes = 0;
  let packs = 0;
  const walk = (path) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        bytes += statSync(full).size;
        if (entry.name.endsWith(".pack")) packs++;
      }
    }
  };
  if (dir) walk(dir);
  return { bytes, packs };
}

/** Whether `newSha` contains `oldSha` (a fast-forward), asked of git with the quarantined objects visible. */
function isFastForward(oldSha, newSha) {
  const result = spawnSync("git", ["merge-base", "--is-ancestor", oldSha, newSha], { stdio: "ignore" });
  return result.status === 0;
}

function refusals(policy, updates, incoming) {
  const found = [];
  for (const [oldSha, newSha, ref] of updates) {
    if (!ref?.startsWith("refs/heads/")) continue;
    const branch = ref.slice("refs/heads/".length);
    const rules = policy.rules.filter((rule) => new RegExp(rule.regex, "s").test(branch));
    // A branch that does not exist yet may be created: rules guard the history a branch has.
    if (rules.length === 0 || ZERO.test(oldSha)) continue;
    const named = `protection rule ${rules.map((rule) => JSON.stringify(rule.pattern)).join(", ")}`;
    const reviewed = rules.some((rule) => rule.requiredApprovals > 0 || rule.requireGreenChecks);
    if (ZERO.test(newSha)) {
      if (reviewed || rules.some((rule) => rule.blockDeletion))
        found.push(`deleting branch ${branch} is refused by ${named}`);
    } else if (reviewed) {
      found.push(`branch ${branch} takes changes through pull requests only (${named}): push to another branch`);
    } else if (rules.some((rule) => rule.blockForcePush) && !isFastForward(oldSha, newSha)) {
      found.push(`force pushes to branch ${branch} are refused by ${named}`);
    }
  }
  if (policy.sizeLimitBytes !== null && policy.sizeBytes + incoming.bytes > policy.sizeLimitBytes) {
    found.push(
      `the push adds ${incoming.bytes} bytes to a repository of ${policy.sizeBytes}, past its size_limit_bytes of ${policy.sizeLimitBytes}`,
    );
  }
  if (policy.packCountLimit !== null && policy.packCount + incoming.packs > policy.packCountLimit) {
    found.push(
      `the push would make ${policy.packCount + incoming.packs} packs, past the pack_count_limit of ${policy.packCountLimit}`,
    );
  }
  return found;
}

let policy;
try {
  policy = JSON.parse(process.env.PLATFORM_PUSH_POLICY ?? "");
} catch {
  process.stderr.write("push refused: the server gave no push policy\n");
  process.exit(1);
}
const updates = readFileSync(0, "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => line.split(" "));
const found = refusals(policy, updates, incomingUsage(process.env.GIT_QUARANTINE_PATH));
if (found.length > 0) {
  for (const message of found) process.stderr.write(`${message}\n`);
  process.stderr.write("nothing of this push was kept\n");
  process.exit(1);
}
