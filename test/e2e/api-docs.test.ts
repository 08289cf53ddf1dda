import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./chromium.js";
import { repoRoot } from "./platform-server.js";
import { apiUrl, identityUrl } from "./shared-server.js";

// Each listener documents itself: /openapi.json and the /docs page, which renders in Chromium
// from what the server itself serves, with no request leaving the server under test.
const screenshotDir = join(tmpdir(), "platform-api-docs");
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  await mkdir(screenshotDir, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string }>>;
  servers?: { url: string }[];
  components?: { schemas?: Record<string, unknown> };
}

const listeners = [
  {
    name: "api",
    url: apiUrl,
    paths: ["/v1/script/env/{key}", "/v1/compute/secrets", "/v1/iam/orgs", "/v1/identity/pools/{pool}/users"],
    operations: ["ScriptService_GetEnvVar", "SecretService_CreateSecret", "createPool"],
    // The issuer's paths, and a service of the contract the api listener does not serve yet.
    absent: ["/token", "/.well-known/openid-configuration", "/v1/compute/builds"],
  },
  {
    name: "identity",
    url: identityUrl,
    paths: ["/token", "/.well-known/openid-configuration", "/userinfo"],
    operations: ["getOpenidConfiguration", "token", "getUserInfo"],
    absent: ["/v1/script/env", "/v1/identity/pools"],
  },
] as const;

describe.each(listeners)("the $name listener's reference", (listener) => {
  it("serves its document at /openapi.json with no credential, and only its own paths", async () => {
    const response = await fetch(`${listener.url()}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const document = (await response.json()) as OpenApi;
    expect(document.openapi).toMatch(/^3\.1\./);
    for (const path of listener.paths) expect(Object.keys(document.paths)).toContain(path);
    const operationIds = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.operationId),
    );
    for (const operation of listener.operations) expect(operationIds).toContain(operation);
    for (const path of listener.absent)
      expect(Object.keys(document.paths).filter((p) => p.startsWith(path))).toEqual([]);
  });

  it("answers a revalidation with 304, gzips on request and refuses other methods with 405", async () => {
    const first = await fetch(`${listener.url()}/openapi.json`, { headers: { "accept-encoding": "identity" } });
    const etag = first.headers.get("etag");
    const firstText = await first.text();
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${listener.url()}/openapi.json`, {
      headers: { "if-none-match": etag!, "accept-encoding": "identity" },
    });
    expect(again.status).toBe(304);
    // fetch() asks for gzip and unpacks it: the document arrives whole, under the gzip validator.
    const zipped = await fetch(`${listener.url()}/openapi.json`);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("etag")).not.toBe(etag);
    expect(((await zipped.json()) as OpenApi).paths).toEqual((JSON.parse(firstText) as OpenApi).paths);
    const head = await fetch(`${listener.url()}/openapi.json`, {
      method: "HEAD",
      headers: { "accept-encoding": "identity" },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    expect(Number(head.headers.get("content-length"))).toBe(Buffer.byteLength(firstText));
    expect(await head.text()).toBe("");
    const post = await fetch(`${listener.url()}/openapi.json`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("serves /docs as HTML behind a CSP that allows this origin only", async () => {
    const response = await fetch(`${listener.url()}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|\*|unsafe-eval/);
    expect(response.headers.get("etag")).toBeTruthy();
    const slash = await fetch(`${listener.url()}/docs/`, { redirect: "manual" });
    expect(slash.status).toBe(301);
    expect(new URL(slash.headers.get("location")!, `${listener.url()}/docs/`).href).toBe(`${listener.url()}/docs`);
  });

  it("renders its operations in Chromium with every request going to the server under test", async () => {
    const origin = new URL(listener.url()).origin;
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    try {
      const answer = await page.goto(`${origin}/docs`);
      expect(answer?.status()).toBe(200);
      await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
      const text = await page.locator("#reference").innerText();
      for (const path of listener.paths) expect(text).toContain(path);
      for (const operation of listener.operations) expect(text).toContain(operation);
      const screenshot = join(screenshotDir, `${listener.name}-listener.png`);
      await page.screenshot({ path: screenshot });
      console.log(`reference page of the ${listener.name} listener: ${screenshot}`);
    } finally {
      await page.close();
    }
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
    // A CSP refusal is reported on the console: the page must work within its policy.
    expect(problems).toEqual([]);
  });
});

describe("the api listener's reference page", () => {
  it("tries a call out against the listener it is served from", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${apiUrl()}/docs#/ScriptService/ScriptService_HealthCheck`);
      const operation = page.locator("#operations-ScriptService-ScriptService_HealthCheck");
      await operation.locator(".try-out__btn").click({ timeout: 20_000 });
      const answer = page.waitForResponse((response) => response.url() === `${apiUrl()}/v1/script/health`);
      await operation.locator("button.execute").click();
      expect((await answer).status()).toBe(200);
      await expect
        .poll(() => operation.locator(".live-responses-table tbody").innerText())
        .toMatch(/200[\s\S]*"status": "ok"/);
    } finally {
      await page.close();
    }
  });
});

describe("npm run docs", () => {
  let outDir: string;
  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), "platform-docs-site-"));
    await promisify(execFile)(process.execPath, ["--import", "tsx", join(repoRoot, "scripts/build-docs.ts"), outDir], {
      cwd: repoRoot,
    });
  }, 60_000);
  afterAll(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it("writes a page per listener with the renderer's files, referring only to files beside it", async () => {
    for (const file of [
      "index.html",
      "assets/swagger-ui-bundle.js",
      "assets/swagger-ui.css",
      "assets/reference.js",
      "api/index.html",
      "api/openapi.json",
      "data/index.html",
      "data/openapi.json",
      "identity/index.html",
      "identity/openapi.json",
    ]) {
      expect(existsSync(join(outDir, file)), file).toBe(true);
    }
    for (const page of ["index.html", "api/index.html", "data/index.html", "identity/index.html"]) {
      const html = await readFile(join(outDir, page), "utf8");
      const references = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);
      expect(references.length).toBeGreaterThan(0);
      for (const reference of references) {
        if (reference.startsWith("data:")) continue;
        expect(reference, `${page} refers to ${reference}`).not.toMatch(/^[a-z]+:|^\/\//i);
        expect(existsSync(join(outDir, page, "..", reference)), `${page} refers to ${reference}`).toBe(true);
      }
    }
  });

  it("documents what the running listeners serve", async () => {
    for (const listener of listeners) {
      const built = JSON.parse(await readFile(join(outDir, listener.name, "openapi.json"), "utf8")) as OpenApi;
      const served = (await (await fetch(`${listener.url()}/openapi.json`)).json()) as OpenApi;
      expect(Object.keys(built.paths).sort()).toEqual(Object.keys(served.paths).sort());
      expect(Object.keys(built.components?.schemas ?? {}).sort()).toEqual(
        Object.keys(served.components?.schemas ?? {}).sort(),
      );
    }
  });

  it("renders each page from disk with no request beyond its own files", async () => {
    for (const listener of listeners) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const requests: string[] = [];
      page.on("request", (request) => requests.push(request.url()));
      try {
        await page.goto(pathToFileURL(join(outDir, listener.name, "index.html")).href);
        await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
        const text = await page.locator("#reference").innerText();
        for (const path of listener.paths) expect(text).toContain(path);
        const screenshot = join(screenshotDir, `${listener.name}-static.png`);
        await page.screenshot({ path: screenshot });
        console.log(`static reference page of the ${listener.name} listener: ${screenshot}`);
      } finally {
        await page.close();
      }
      expect(
        requests.filter((url) => !url.startsWith(pathToFileURL(outDir).href + "/") && !url.startsWith("data:")),
      ).toEqual([]);
    }
  });
});
