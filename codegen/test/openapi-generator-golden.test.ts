import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generatePlane } from "../src/openapi/generate-plane.js";

// The OpenAPI generator's whole output for a fixture that uses every feature, compared byte for
// byte with committed files. The golden files are TypeScript, so the repository's type-check
// covers them and the runtime tests serve and call them. After an intended change,
// `UPDATE_GOLDEN=1 npx vitest run codegen/test/openapi-generator-golden.test.ts` rewrites them;
// review the diff like code.
const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, "fixtures/golden-plane.yaml");
const goldenDir = join(here, "golden/openapi/golden-plane");
const generate = async () =>
  generatePlane("golden-plane", "codegen/test/fixtures/golden-plane.yaml", await readFile(fixture, "utf8"));
const output = await generate();

describe("OpenAPI generator output", () => {
  it("writes exactly the expected files", () => {
    expect([...output.keys()].sort()).toEqual(["client.ts", "handler.ts", "routes.ts", "schemas.ts", "types.ts"]);
  });

  it.each([...output.keys()])("%s matches its golden file", async (name) => {
    const path = join(goldenDir, name);
    if (process.env.UPDATE_GOLDEN) {
      await mkdir(goldenDir, { recursive: true });
      await writeFile(path, output.get(name)!);
    }
    expect(output.get(name)).toBe(await readFile(path, "utf8"));
  });

  it("is deterministic", async () => {
    expect(await generate()).toEqual(output);
  });
});
