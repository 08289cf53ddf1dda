import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { provenanceRemarks } from "./provenance-remarks.js";

// Every OpenAPI document, generated or written by hand, must pass what third parties run on it:
// `redocly lint` with the recommended rules (redocly.yaml at the repository root) and
// swagger-parser's validation.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const generated = (await readdir(join(root, "gen/openapi")))
  .filter((n) => n.endsWith(".json"))
  .map((n) => `gen/openapi/${n}`);
const sources = (await readdir(join(root, "openapi"))).filter((n) => n.endsWith(".yaml")).map((n) => `openapi/${n}`);
const documents = [...generated, ...sources].sort();

interface LintProblem {
  readonly ruleId: string;
  readonly severity: "error" | "warn";
  readonly message: string;
  readonly location: readonly { readonly source: { readonly ref: string }; readonly pointer: string }[];
}

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number };
  readonly problems: readonly LintProblem[];
}

/** Runs the redocly CLI once over every document; `--format=json` prints one report per document. */
async function lintAll(): Promise<LintReport[]> {
  const cli = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, "lint", "--config", "redocly.yaml", "--format=json", ...documents],
      // Offline: no usage reports, no update check.
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        maxBuffer: 64 * 1024 * 1024,
      },
      // A lint error makes the CLI exit with 1: the report still says which.
      (error, out) => (out.trim() !== "" ? resolve(out) : reject(error ?? new Error("redocly printed nothing"))),
    );
  });
  return stdout.split(/(?<=\n\})(?=\{)/).map((chunk) => JSON.parse(chunk) as LintReport);
}

const where = (p: LintProblem) => `${p.location[0]?.source.ref ?? "?"}${p.location[0]?.pointer ?? ""}`;

describe("redocly lint (recommended)", async () => {
  const reports = await lintAll();
  const problems = reports.flatMap((r) => r.problems);

  it("reports on every document", () => {
    expect(documents.length).toBeGreaterThan(10);
    expect(reports).toHaveLength(documents.length);
  });

  it("finds no error in any document", () => {
    const errors = problems
      .filter((p) => p.severity === "error")
      .map((p) => `${p.ruleId} at ${where(p)}: ${p.message}`);
    expect(errors).toEqual([]);
  });

  it("finds not even a warning in the generated documents", () => {
    const warnings = problems
      .filter((p) =>
        p.location.some((l) => relative(root, l.source.ref).startsWith("gen/") || l.source.ref.startsWith("gen/")),
      )
      .map((p) => `${p.ruleId} at ${where(p)}: ${p.message}`);
    expect(warnings).toEqual([]);
  });
});

describe("swagger-parser", () => {
  it.each(documents)("validates %s", async (document) => {
    await expect(SwaggerParser.validate(join(root, document))).resolves.toMatchObject({
      openapi: expect.stringMatching(/^3\.1\./),
    });
  });
});

describe("public descriptions", () => {
  it.each(documents)("of %s describe our API only, without remarks on where a choice came from", async (document) => {
    expect(provenanceRemarks(await readFile(join(root, document), "utf8"))).toEqual([]);
  });
});

describe("the SDK clients' documentation", () => {
  const clients = readdirSync(join(root, "gen/platform"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("_client.ts"))
    .map((file) => `gen/platform/${file}`);

  it.each(clients)("in %s describes our API only, like the documents", async (client) => {
    expect(clients.length).toBeGreaterThan(0);
    expect(provenanceRemarks(await readFile(join(root, client), "utf8"))).toEqual([]);
  });
});
