// Time to generate the full contract (`buf generate`: protoc-gen-es and protoc-gen-platform), with
// protoc-gen-es alone in the same run as the baseline, and the OpenAPI generator that
// `npm run generate` runs after buf. Output goes to a temporary directory.
// Run: npx tsx bench/generate.bench.ts
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const buf = "node_modules/.bin/buf";
const esOnly = JSON.stringify({
  version: "v2",
  inputs: [{ directory: "proto" }],
  plugins: [
    {
      local: "node_modules/.bin/protoc-gen-es",
      out: "gen",
      include_imports: true,
      strategy: "all",
      opt: ["target=ts", "import_extension=js"],
    },
  ],
});
const ourOnly = JSON.stringify({
  version: "v2",
  inputs: [{ directory: "proto" }],
  plugins: [
    {
      local: ["node", "--import", "tsx", "codegen/src/proto/main.ts"],
      out: "gen",
      strategy: "all",
      opt: ["target=ts", "import_extension=js"],
    },
  ],
});

/** Runs a generator writing into a fresh temporary directory, `runs` times, and prints the spread. */
function time(label: string, generate: (out: string) => void, runs = 5): void {
  const seconds: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = mkdtempSync(join(tmpdir(), "gen-"));
    const start = performance.now();
    generate(out);
    seconds.push((performance.now() - start) / 1000);
    rmSync(out, { recursive: true, force: true });
  }
  seconds.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(46)} median ${seconds[Math.floor(runs / 2)]!.toFixed(2)} s  (min ${seconds[0]!.toFixed(2)}, max ${seconds.at(-1)!.toFixed(2)})`,
  );
}

const bufGenerate = (args: string[]) => (out: string) =>
  execFileSync(buf, ["generate", ...args, "-o", out], { stdio: "inherit" });
const openApiGenerate = (out: string) =>
  execFileSync("node", ["--import", "tsx", "codegen/src/openapi/main.ts", join(out, "openapi")], { stdio: "inherit" });

time("buf generate (full contract, both plugins)", bufGenerate([]));
time("baseline: protoc-gen-es alone", bufGenerate(["--template", esOnly]));
time("protoc-gen-platform alone", bufGenerate(["--template", ourOnly]));
time("OpenAPI generator (openapi/*.yaml)", openApiGenerate);
time("npm run generate (buf, then the OpenAPI generator)", (out) => {
  bufGenerate([])(out);
  openApiGenerate(out);
});
