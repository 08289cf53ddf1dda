import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// The hosted login page in headless Chromium: a full sign-in through GET /authorize and the
// page's form, without any script on the page, ending at the client's redirect URI with a code.
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const PASSWORD = "correct horse battery staple";
let browser: Browser;
let acme: TestOrganization;
/** The client application: a plain HTTP server the login redirects the browser to. */
let client: Server;
let REDIRECT_URI = "";

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  browser = await chromium.launch({
    executablePath: chromiumPath,
    // Local Network Access checks would ask a user nobody can answer headless before the page
    // may go on to the client's loopback address.
    args: [
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  acme = await createOrganization("login-browser");
  client = createServer((_request, response) =>
    response.writeHead(200, { "content-type": "text/plain" }).end("signed in"),
  );
  await new Promise<void>((resolve) => client.listen(0, "127.0.0.1", resolve));
  REDIRECT_URI = `http://127.0.0.1:${(client.address() as AddressInfo).port}/callback`;
});
afterAll(async () => {
  await browser?.close();
  client?.close();
});

describe("identity hosted login in a browser", () => {
  it("signs in through the hosted page and lands on the redirect URI with code, state and iss", async () => {
    const admin = acme.client.identityAdmin;
    await admin.createPool({ body: { name: "browser", displayName: "Browser <Shop>" } });
    await admin.updatePool({
      path: { pool: "browser" },
      body: {
        settingsJson: JSON.stringify({ redirect_uris: [REDIRECT_URI] }),
        brandingJson: JSON.stringify({ primary_color: "#aa3300" }),
      },
    });
    const email = `ann-${randomBytes(3).toString("hex")}@example.com`;
    await admin.createUser({ path: { pool: "browser" }, body: { email, password: PASSWORD } });

    const issuer = `${inject("platformUrls").identity}/${acme.name}/browser`;
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL(`${issuer}/authorize`);
    for (const [name, value] of Object.entries({
      response_type: "code",
      client_id: "spa",
      redirect_uri: REDIRECT_URI,
      state: "state-42",
      scope: "openid",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    })) {
      authorize.searchParams.set(name, value);
    }

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });

    await page.goto(authorize.toString());
    expect(page.url()).toMatch(new RegExp(`^${issuer}/login\\?transaction=`));
    expect(await page.title()).toBe("Sign in · Browser <Shop>");
    expect(await page.locator("h1").textContent()).toBe("Sign in to Browser <Shop>");

    await page.fill("#email", email);
    await page.fill("#password", "not the password");
    await page.click("button[type=submit] >> nth=0");
    expect(await page.locator(".error").textContent()).toContain("Wrong e-mail address or password");
    expect(await page.inputValue("#email")).toBe(email);

    await page.fill("#password", PASSWORD);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(REDIRECT_URI)),
      page.click("button[type=submit] >> nth=0"),
    ]);
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(REDIRECT_URI);
    expect(landed.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(landed.searchParams.get("state")).toBe("state-42");
    expect(landed.searchParams.get("iss")).toBe(issuer);
    expect(violations).toEqual([]);

    // The code the browser carried is good for tokens with the verifier only the client holds.
    const tokens = await fetch(`${issuer}/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: landed.searchParams.get("code")!,
        redirect_uri: REDIRECT_URI,
        client_id: "spa",
        code_verifier: verifier,
      }),
    });
    expect(tokens.status).toBe(200);
    expect(((await tokens.json()) as { id_token?: string }).id_token).toBeTruthy();
    await context.close();
  });
});
