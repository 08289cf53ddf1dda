import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./platform-server.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// @platform/sdk as a user gets it: `npm pack` (which builds it), installed from the tarball into a
// new project outside the repository, a TypeScript program type-checked with `tsc --strict` and
// run with plain `node`, and a CommonJS program that require()s it, both against the binary; the
// README's quick start type-checks against it too.
const run = promisify(execFile);
const tsc = join(repoRoot, "node_modules/.bin/tsc");
let project: string;
let acme: TestOrganization;

/** Runs a command, failing with its output when it fails. */
async function sh(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, {
      cwd,
      env: { ...process.env, npm_config_loglevel: "error" },
      maxBuffer: 16 << 20,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`);
  }
}

beforeAll(async () => {
  acme = await createOrganization("packed");
  project = await mkdtemp(join(tmpdir(), "sdk-consumer-"));
  await sh("npm", ["pack", "--pack-destination", project], join(repoRoot, "sdk"));
  const tarball = (await readdir(project)).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error("npm pack wrote no tarball");
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({ name: "sdk-consumer", private: true, type: "module" }),
  );
  await sh("npm", ["install", `./${tarball}`, "--prefer-offline", "--no-audit", "--no-fund"], project);
  await writeFile(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: false,
        types: [],
        outDir: "out",
      },
      files: ["main.ts", "legacy.cts", "readme.ts"],
    }),
  );
}, 240_000);
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

/** The values a program needs, written into it as literals (it has no Node types). */
function connection(): string {
  return `const connection = { apiUrl: ${JSON.stringify(apiUrl())}, token: ${JSON.stringify(acme.token)}, organization: ${JSON.stringify(acme.name)} };\n`;
}

const esmProgram = (
  connection: string,
) => `import { Code, ConnectError, RestCallError, createPlatformClient, scriptV1, type PlatformClient } from "@platform/sdk";
${connection}
const platform: PlatformClient = createPlatformClient(connection);
const health = await platform.script.healthCheck({});
await platform.script.setEnvVar({ key: "PACKED", value: "from the tarball" });
const read: string = (await platform.script.getEnvVar({ key: "PACKED" })).value;
const { vars } = await platform.script.listEnvVars({});
const { threads } = await platform.script.listThreads({ statusFilter: scriptV1.ThreadStatus.RUNNING });
const uptime: bigint = health.uptimeSeconds;
let missing: Code | undefined;
try {
  await platform.script.getEnvVar({ key: "MISSING" });
} catch (error) {
  missing = ConnectError.from(error).code;
}
// @ts-expect-error: the request type is checked, so an unknown field is refused at compile time.
await platform.script.getEnvVar({ name: "PACKED" }).catch(() => undefined);

// The REST planes answer with the body and throw a typed error, as the RPC planes do.
const pool = await platform.identityAdmin.createPool({ body: { name: "packed" } });
const poolName: string = pool.name;
const { pools } = await platform.identityAdmin.listPools({});
let restError: { status: number; code: string } | undefined;
try {
  await platform.identityAdmin.getPool({ path: { pool: "nowhere" } });
} catch (error) {
  if (error instanceof RestCallError && error instanceof ConnectError) restError = { status: error.status, code: Code[error.code] };
}
console.log(JSON.stringify({
  status: health.status,
  uptimeIsBigint: typeof uptime === "bigint",
  read,
  keys: vars.map((v) => v.key),
  threads: threads.length,
  missing: missing === undefined ? undefined : Code[missing],
  poolName,
  pools: pools.map((p) => p.name),
  restError,
}));
`;

const cjsProgram = (connection: string) => `import sdk = require("@platform/sdk");
${connection}
async function main(): Promise<void> {
  const platform = sdk.createPlatformClient(connection);
  const { value } = await platform.script.getEnvVar({ key: "PACKED" });
  const { pools } = await platform.identityAdmin.listPools({});
  const running: number = sdk.scriptV1.ThreadStatus.RUNNING;
  console.log(JSON.stringify({ value, pools: pools.map((p) => p.name), running, notFound: sdk.Code.NotFound }));
}
main().catch((error: unknown) => {
  console.error(error);
  throw error;
});
`;

describe("the packed SDK", () => {
  it("type-checks under tsc --strict as ES module and CommonJS, and runs with plain node", async () => {
    await writeFile(join(project, "main.ts"), esmProgram(connection()));
    await writeFile(join(project, "legacy.cts"), cjsProgram(connection()));
    // The README's quick start, as written, against the package (it reads PLATFORM_TOKEN).
    const readme = await readFile(join(repoRoot, "sdk/README.md"), "utf8");
    const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quickStart).toContain("createPlatformClient");
    await writeFile(
      join(project, "readme.ts"),
      `declare const process: { env: Record<string, string | undefined> };\n${quickStart}`,
    );
    await sh(tsc, ["-p", "tsconfig.json", "--strict"], project);

    const esm = JSON.parse(await sh(process.execPath, ["out/main.js"], project)) as Record<string, unknown>;
    expect(esm).toMatchObject({
      status: "ok",
      uptimeIsBigint: true,
      read: "from the tarball",
      keys: ["PACKED"],
      threads: 0,
      missing: "NotFound",
      poolName: "packed",
      pools: ["packed"],
      restError: { status: 404, code: "NotFound" },
    });

    const cjs = JSON.parse(await sh(process.execPath, ["out/legacy.cjs"], project)) as Record<string, unknown>;
    expect(cjs).toEqual({ value: "from the tarball", pools: ["packed"], running: expect.any(Number), notFound: 5 });
  }, 180_000);

  it("is required by a plain CommonJS script and carries no import of the repository's own packages", async () => {
    await writeFile(
      join(project, "plain.cjs"),
      `const { createPlatformClient, RestCallError, ConnectError } = require("@platform/sdk");
       const platform = createPlatformClient({ apiUrl: process.argv[2] });
       platform.script.healthCheck({}).then((health) => console.log(JSON.stringify({ status: health.status, restErrorIsConnectError: RestCallError.prototype instanceof ConnectError })));`,
    );
    expect(JSON.parse(await sh(process.execPath, ["plain.cjs", apiUrl()], project))).toEqual({
      status: "ok",
      restErrorIsConnectError: true,
    });
    const installed = join(project, "node_modules/@platform");
    expect(await readdir(installed)).toEqual(["sdk"]);
  });
});
