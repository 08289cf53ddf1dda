// `npm test`: every check the project makes, in order, and one closing line "N passed, N failed"
// counting each check and each test. Steps: type-check, lint, generated-code drift, tests on the
// embedded database, and the database tests again on PostgreSQL when TEST_DATABASE_URL is set.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface StepResult {
  name: string;
  passed: number;
  failed: number;
}

const results: StepResult[] = [];

function step(name: string, command: string, args: string[]): boolean {
  console.log(`\n=== ${name}: ${[command, ...args].join(" ")}`);
  const started = Date.now();
  const run = spawnSync(command, args, { stdio: "inherit" });
  const ok = run.status === 0;
  console.log(`=== ${name}: ${ok ? "ok" : "FAILED"} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  results.push({ name, passed: ok ? 1 : 0, failed: ok ? 0 : 1 });
  return ok;
}

step("type-check", "npx", ["tsc", "-p", "tsconfig.json"]);
step("lint", "npm", ["run", "-s", "lint"]);
if (step("generate", "npm", ["run", "-s", "generate"])) {
  // The committed gen/ must be exactly what the generator writes from the committed sources.
  step("generated-code drift", "sh", [
    "-c",
    'test -z "$(git status --porcelain -- gen)" || { git status --porcelain -- gen; git --no-pager diff --stat -- gen; exit 1; }',
  ]);
}

/** Runs vitest (optionally on some paths only) and counts its tests into the summary. */
function tests(name: string, paths: string[], env: NodeJS.ProcessEnv): void {
  const reportDir = mkdtempSync(join(tmpdir(), "vitest-"));
  const report = join(reportDir, "report.json");
  console.log(`\n=== ${name}: npx vitest run ${paths.join(" ")}`);
  const vitest = spawnSync(
    "npx",
    ["vitest", "run", ...paths, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
    {
      stdio: "inherit",
      env: { ...process.env, ...env },
    },
  );
  const result: StepResult = { name, passed: 0, failed: 0 };
  try {
    const json = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number };
    result.passed = json.numPassedTests;
    result.failed = json.numFailedTests;
  } catch {
    // No report: vitest could not even start.
  }
  // A suite that fails to load counts no failed test, yet vitest exits non-zero: count it once.
  if (vitest.status !== 0 && result.failed === 0) result.failed = 1;
  results.push(result);
  rmSync(reportDir, { recursive: true, force: true });
}

// Everything on the embedded database; then, when TEST_DATABASE_URL names a PostgreSQL server,
// everything that touches a database again on it. The embedded run still learns of that server
// (TEST_POSTGRES_SERVER_URL) for what needs one beside the platform's own database, such as a
// pool whose users live in a PostgreSQL database of their own.
const postgresUrl = process.env.TEST_DATABASE_URL;
tests("tests (embedded database)", [], { TEST_DATABASE_URL: "", TEST_POSTGRES_SERVER_URL: postgresUrl ?? "" });
if (postgresUrl) tests("tests (PostgreSQL)", ["server", "test/e2e"], { TEST_DATABASE_URL: postgresUrl });
else console.log("\nTEST_DATABASE_URL is not set: the PostgreSQL run is skipped.");

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log("\nSummary:");
for (const r of results) console.log(`  ${r.name}: ${r.passed} passed, ${r.failed} failed`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
