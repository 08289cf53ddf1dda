import { readFile, writeFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { compileProtos, runPlugin } from "./compile-proto.js";

// The generator's whole output for a fixture that uses every binding rule, compared byte for
// byte with committed files. `UPDATE_GOLDEN=1 npx vitest run codegen/test/generator-golden.test.ts`
// rewrites them after an intended change; review the diff like code.
const here = dirname(fileURLToPath(import.meta.url));
const goldenDir = join(here, "golden");
let output: Map<string, string>;

beforeAll(async () => {
  const source = await readFile(join(here, "fixtures/golden.proto"), "utf8");
  output = runPlugin(await compileProtos({ "golden/v1/golden.proto": source }));
});

describe("generator output", () => {
  it("writes exactly the expected files", () => {
    expect([...output.keys()].sort()).toEqual([
      "golden/v1/golden_client.ts",
      "golden/v1/golden_http.ts",
      "golden/v1/golden_server.ts",
      "openapi/golden.v1.openapi.json",
      "openapi/platform.openapi.json",
    ]);
  });

  it.each([
    "golden/v1/golden_client.ts",
    "golden/v1/golden_http.ts",
    "golden/v1/golden_server.ts",
    "openapi/golden.v1.openapi.json",
  ])("%s matches its golden file", async (name) => {
    const path = join(goldenDir, `${name.replace(/\//g, "__")}.golden`);
    const actual = output.get(name)!;
    if (process.env.UPDATE_GOLDEN) {
      await mkdir(goldenDir, { recursive: true });
      await writeFile(path, actual);
    }
    expect(actual).toBe(await readFile(path, "utf8"));
  });

  it("is deterministic", async () => {
    const source = await readFile(join(here, "fixtures/golden.proto"), "utf8");
    const again = runPlugin(await compileProtos({ "golden/v1/golden.proto": source }));
    expect(again).toEqual(output);
  });
});
