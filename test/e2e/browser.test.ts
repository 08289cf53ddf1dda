import { join } from "node:path";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./chromium.js";
import { repoRoot } from "./platform-server.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// The SDK bundled for the browser and run in headless Chromium, from a page whose origin the
// shared server allows (`--cors-origin http://app.example`) and from one it does not.
let browser: Browser;
let bundle: string;
let acme: TestOrganization;

beforeAll(async () => {
  const result = await build({
    entryPoints: [join(repoRoot, "sdk/src/index.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  bundle = result.outputFiles[0]!.text;
  browser = await launchChromium();
  acme = await createOrganization("browser");
});
afterAll(async () => {
  await browser?.close();
});

/** Loads a page at `origin` (served by the test itself) that runs `script` with the SDK as `sdk`. */
async function runInPage(origin: string, script: string): Promise<unknown> {
  const page = await browser.newPage();
  try {
    await page.route(`${origin}/**`, (route) => {
      const path = new URL(route.request().url()).pathname;
      if (path === "/sdk.js") return route.fulfill({ contentType: "text/javascript", body: bundle });
      return route.fulfill({ contentType: "text/html", body: "<!doctype html><title>app</title>" });
    });
    await page.goto(`${origin}/`);
    return await page.evaluate(`(async () => { const sdk = await import("${origin}/sdk.js"); ${script} })()`);
  } finally {
    await page.close();
  }
}

describe.each(["connect", "grpc-web"])("the SDK in Chromium over %s", (protocol) => {
  it("calls the platform from an allowed origin", async () => {
    const result = await runInPage(
      "http://app.example",
      `const platform = sdk.createPlatformClient({ apiUrl: ${JSON.stringify(apiUrl())}, token: ${JSON.stringify(acme.token)}, organization: ${JSON.stringify(acme.name)}, protocol: ${JSON.stringify(protocol)} });
       const health = await platform.script.healthCheck({});
       await platform.script.setEnvVar({ key: "FROM_BROWSER", value: ${JSON.stringify(protocol)} });
       const read = await platform.script.getEnvVar({ key: "FROM_BROWSER" });
       let missing;
       try { await platform.script.getEnvVar({ key: "NOPE" }); } catch (e) { missing = sdk.ConnectError.from(e).code; }
       return { status: health.status, value: read.value, missing };`,
    );
    expect(result).toEqual({ status: "ok", value: protocol, missing: 5 /* Code.NotFound */ });
  });

  it("is refused by the browser from an origin the server does not allow", async () => {
    const result = await runInPage(
      "http://evil.example",
      `const platform = sdk.createPlatformClient({ apiUrl: ${JSON.stringify(apiUrl())}, token: ${JSON.stringify(acme.token)}, organization: ${JSON.stringify(acme.name)}, protocol: ${JSON.stringify(protocol)}, retry: false });
       try { await platform.script.listEnvVars({}); return "reached"; } catch (e) { return sdk.Code[sdk.ConnectError.from(e).code]; }`,
    );
    expect(result).not.toBe("reached");
  });
});
