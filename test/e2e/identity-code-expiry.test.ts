import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// An authorization code dies 60 s after it is issued. The binary has no clock to move, so this
// file runs it under libfaketime (Debian's `faketime`, installed by .ci/run) reading its offset from
// a file: the test issues a code, moves the server's clock two minutes on, and exchanges it.

const libfaketime = findLibfaketime();
const REDIRECT_URI = "http://localhost:9999/callback";
const PASSWORD = "correct horse battery staple";

function findLibfaketime(): string | undefined {
  const root = "/usr/lib";
  const dirs = existsSync(root) ? readdirSync(root).filter((name) => name.endsWith("-linux-gnu")) : [];
  return dirs.map((dir) => join(root, dir, "faketime/libfaketime.so.1")).find((path) => existsSync(path));
}

describe.skipIf(!libfaketime)("identity issuer: an authorization code past its 60 s", () => {
  let server: StartedServer;
  let clockDir: string;
  let clockFile: string;
  let issuer: string;

  /** Moves the server's wall clock two minutes on, and waits until its Date header shows it. */
  async function moveClockTwoMinutesOn() {
    await writeFile(clockFile, "+2m\n");
    const deadline = Date.now() + 15_000;
    // libfaketime re-reads the file once its one-second cache runs out.
    for (;;) {
      const answer = await fetch(`${server.urls.identity}/healthz`);
      if (Date.parse(answer.headers.get("date")!) - Date.now() > 60_000) return;
      expect(Date.now(), "the server's clock did not move").toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  beforeAll(async () => {
    clockDir = await mkdtemp(join(tmpdir(), "platform-clock-"));
    clockFile = join(clockDir, "offset");
    await writeFile(clockFile, "+0\n");
    server = await startPlatformServer([], {
      env: {
        LD_PRELOAD: libfaketime,
        FAKETIME_TIMESTAMP_FILE: clockFile,
        FAKETIME_CACHE_DURATION: "1",
        // Timers and timeouts keep real time: only the wall clock moves.
        FAKETIME_DONT_FAKE_MONOTONIC: "1",
      },
    });
    const name = `expiry-${randomBytes(4).toString("hex")}`;
    const created = await runAdmin(server.dataDir, ["create-org", name]);
    const admin = createPlatformClient({
      apiUrl: server.urls.api!,
      token: (created.json as { apiKey: string }).apiKey,
      organization: name,
    }).identityAdmin;
    await admin.createPool({ body: { name: "app" } });
    await admin.updatePool({
      path: { pool: "app" },
      body: { settingsJson: JSON.stringify({ redirect_uris: [REDIRECT_URI] }) },
    });
    await admin.createUser({ path: { pool: "app" }, body: { email: "ada@example.com", password: PASSWORD } });
    issuer = `${server.urls.identity}/${name}/app`;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rm(clockDir, { recursive: true, force: true });
  });

  /** The browser half of the code flow, over plain HTTP: answers the code and its verifier. */
  async function issueCode() {
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL(`${issuer}/authorize`);
    const params = {
      response_type: "code",
      client_id: "web-app",
      redirect_uri: REDIRECT_URI,
      state: "s",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    };
    for (const [key, value] of Object.entries(params)) authorize.searchParams.set(key, value);
    const toLogin = await fetch(authorize, { redirect: "manual" });
    expect(toLogin.status).toBe(302);
    const loginPage = new URL(toLogin.headers.get("location")!);
    const transaction = /name="transaction" value="([^"]+)"/.exec(await (await fetch(loginPage)).text())?.[1];
    const login = await fetch(new URL("login", loginPage), {
      method: "POST",
      body: new URLSearchParams({ transaction: transaction!, email: "ada@example.com", password: PASSWORD }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    return { code: new URL(login.headers.get("location")!).searchParams.get("code")!, verifier };
  }

  const exchange = (code: string, verifier: string) =>
    fetch(`${issuer}/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        client_id: "web-app",
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }),
    });

  it("is refused with invalid_grant once the server's clock has passed its 60 s, and works before", async () => {
    const fresh = await issueCode();
    expect((await exchange(fresh.code, fresh.verifier)).status).toBe(200);

    const late = await issueCode();
    await moveClockTwoMinutesOn();
    const refused = await exchange(late.code, late.verifier);
    // 401 invalid_grant, as the issuer document gives an expired code.
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({
      error: "invalid_grant",
      error_description: expect.stringMatching(/expired/),
    });
  });
});
