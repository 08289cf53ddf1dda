import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { RestPlane, RestValidationSchemas } from "../runtime/index.js";
import { createRestPlaneHandler } from "../runtime/server/index.js";
import { generatePlane } from "../src/openapi/generate-plane.js";

// Every document in openapi/: the committed gen/openapi/<plane>/ is what the generator writes from
// it, and the server can build its handler (ajv compiles every schema), so a schema ajv refuses
// fails here rather than at a server's start.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const names = (await readdir(join(root, "openapi")).catch(() => [] as string[]))
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => f.slice(0, -5));

describe.each(names)("%s", (name) => {
  it("is generated into gen/openapi exactly", async () => {
    const files = generatePlane(
      name,
      `openapi/${name}.yaml`,
      await readFile(join(root, "openapi", `${name}.yaml`), "utf8"),
    );
    for (const [file, content] of files) {
      expect(await readFile(join(root, "gen/openapi", name, file), "utf8"), `${name}/${file}`).toBe(content);
    }
  });

  it("builds a handler, compiling every validation schema", async () => {
    const load = (file: string) => import(/* @vite-ignore */ join(root, "gen/openapi", name, file));
    const routes = (await load("routes.ts")) as Record<string, RestPlane>;
    const schemas = (await load("schemas.ts")) as Record<string, RestValidationSchemas>;
    const plane = Object.values(routes)[0]!;
    const validation = Object.values(schemas)[0]!;
    const handler = createRestPlaneHandler(plane, validation, {});
    expect(typeof handler.nodeHandler()).toBe("function");
  });
});
