// Builds the publishable package into dist/ from a clean checkout (`npm run build`, also run by
// `npm pack` through prepack): the SDK, the generated clients it uses and the client half of
// @platform/codegen's runtime, bundled into one ES module and one CommonJS module, with type
// declarations for each. Only the packages in "dependencies" stay imports.
//
//   dist/esm/index.js      ES module        dist/esm/**/*.d.ts  its declarations
//   dist/cjs/index.js      CommonJS         dist/cjs/**/*.d.ts  the same declarations, read as CommonJS
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(sdkDir, "..");
const dist = join(sdkDir, "dist");
const manifest = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
const clientRuntime = join(repoRoot, "codegen/runtime/client/index.ts");
const runtimeSpecifier = /^@platform\/codegen\/runtime(\/client)?$/;

rmSync(dist, { recursive: true, force: true });

// 1. JavaScript: one bundle per module format. Generated code imports the whole runtime by name;
// only its client entry belongs in an SDK.
const clientRuntimeOnly = {
  name: "client-runtime-only",
  setup(b) {
    b.onResolve({ filter: runtimeSpecifier }, () => ({ path: clientRuntime }));
  },
};
for (const [format, dir] of [
  ["esm", "esm"],
  ["cjs", "cjs"],
]) {
  await build({
    entryPoints: [join(sdkDir, "src/index.ts")],
    outfile: join(dist, dir, "index.js"),
    bundle: true,
    format,
    platform: "neutral",
    target: "es2022",
    external: Object.keys(manifest.dependencies ?? {}),
    plugins: [clientRuntimeOnly],
    banner: {
      js: `// ${manifest.name} ${manifest.version}: built from its repository's sdk/, gen/ and codegen/runtime/client/.`,
    },
    legalComments: "none",
    logLevel: "warning",
  });
}
writeFileSync(join(dist, "cjs/package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);

// 2. Declarations: tsc writes the tree of sources the entry reaches (sdk/src, gen, the client
// runtime) under dist/esm; the runtime's package name is then rewritten to its place in the tree.
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const emitted = spawnSync(process.execPath, [tsc, "-p", join(sdkDir, "tsconfig.build.json")], { stdio: "inherit" });
if (emitted.status !== 0) process.exit(emitted.status ?? 1);
const runtimeDeclarations = join(dist, "esm/codegen/runtime/client/index.js");
for (const file of walk(join(dist, "esm"))) {
  if (!file.endsWith(".d.ts")) continue;
  const text = readFileSync(file, "utf8");
  let target = relative(dirname(file), runtimeDeclarations).split(sep).join("/");
  if (!target.startsWith(".")) target = `./${target}`;
  const rewritten = text.replace(/(["'])@platform\/codegen\/runtime(?:\/client)?\1/g, `"${target}"`);
  if (/@platform\//.test(rewritten))
    throw new Error(`${relative(sdkDir, file)} still imports a package of the repository`);
  if (rewritten !== text) writeFileSync(file, rewritten);
}
writeFileSync(join(dist, "esm/index.d.ts"), 'export * from "./sdk/src/index.js";\n');
// The same tree read as CommonJS declarations, for `require` (its own package.json says so).
cpSync(join(dist, "esm"), join(dist, "cjs"), {
  recursive: true,
  filter: (path) => path !== join(dist, "esm/index.js"),
});
writeFileSync(join(dist, "cjs/index.d.ts"), 'export * from "./sdk/src/index.js";\n');

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
