import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as sdk from "./index.js";

// Every generated message and client module of the platform's proto packages is reachable from
// the SDK's namespaces, so a new .proto file cannot be left out of the package.
const here = dirname(fileURLToPath(import.meta.url));
const gen = join(here, "../../gen/platform");

function generated(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? generated(join(dir, entry.name))
      : /_(pb|client)\.ts$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("the SDK's message namespaces", () => {
  it("re-export every generated message and client module of a service package", () => {
    const exported = new Set(
      readdirSync(join(here, "messages")).flatMap((file) =>
        [...readFileSync(join(here, "messages", file), "utf8").matchAll(/from "(.+)\.js"/g)].map((m) =>
          join(here, "messages", `${m[1]}.ts`),
        ),
      ),
    );
    // platform/api holds the contract's own annotations, which only the generator reads.
    const expected = generated(gen).filter((file) => !relative(gen, file).startsWith("api/"));
    expect(expected.filter((file) => !exported.has(file)).map((file) => relative(gen, file))).toEqual([]);
  });

  it("hold the enums and message schemas by proto package", () => {
    expect(sdk.scriptV1.ThreadStatus.RUNNING).toBeGreaterThan(0);
    expect(sdk.scriptV1.ThreadSchema.typeName).toBe("platform.script.v1.Thread");
    expect(sdk.computeV1.ComputeService.typeName).toBe("platform.compute.v1.ComputeService");
    expect(typeof sdk.vectordbV1.createVectorDbServiceClient).toBe("function");
  });
});
