// Entry point of the OpenAPI generator, run by `npm run generate` after `buf generate` (whose
// `clean: true` empties gen/): every openapi/<plane>.yaml becomes gen/openapi/<plane>/. An
// argument names another output directory (the benchmark writes to a temporary one).
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generatePlane } from "./generate-plane.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const sourceDir = join(root, "openapi");
const outDir = process.argv[2] ?? join(root, "gen/openapi");

const names = (await readdir(sourceDir).catch(() => [] as string[])).filter((file) => file.endsWith(".yaml")).sort();
const planes = await Promise.all(
  names.map(async (file) => {
    const name = file.slice(0, -".yaml".length);
    return { name, files: generatePlane(name, `openapi/${file}`, await readFile(join(sourceDir, file), "utf8")) };
  }),
);
// Every document is generated before anything is written, so a bad one leaves gen/ as it was.
for (const { name, files } of planes) {
  const dir = join(outDir, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [file, content] of files) await writeFile(join(dir, file), content);
}
