import { randomBytes } from "node:crypto";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type Client,
  type Interceptor,
} from "@connectrpc/connect";
import { toJsonString } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialSchema, CredentialType, Provider } from "../../gen/platform/data/source/v1/source_pb.js";
import { SourceService } from "../../gen/platform/data/source/v1/source_service_pb.js";
import { principalKey } from "../../server/src/auth/principal.js";
import { createSecretBox, type SecretBox } from "../../server/src/crypto/secret-box.js";
import { openCredentialSecret } from "../../server/src/services/source/credential-secret.js";
import { createCredentialStore } from "../../server/src/services/source/credential-store.js";
import { parseOAuthProviders } from "../../server/src/services/source/oauth/oauth-provider-config.js";
import { createSourceService } from "../../server/src/services/source/source-handlers.js";
import { openTestDatabase, type TestDatabase } from "../../server/test/test-database.js";
import { createOrganization, identityUrl, type TestOrganization } from "./shared-server.js";

// OAuth connections of data sources against a real OAuth 2.0 provider: an identity pool of the
// running binary. The source service runs in this process (its listener is not served yet) on a
// database of its own, reached through an in-memory Connect router, and is configured, as an
// operator would, with the pool's authorization and token endpoints. The browser half of the flow
// is plain HTTP to the pool's hosted login page.

const REDIRECT_URI = "http://localhost:9999/oauth/callback";
const PASSWORD = "correct horse battery staple";
const EMAIL = "ada@example.com";

let acme: TestOrganization;
let issuer: string;
let database: TestDatabase;
let box: SecretBox;
const orgIds: string[] = [];

/** A client of the in-process service, calling as an organization of its database. */
function sourceClient(orgId: string): Client<typeof SourceService> {
  const asOrganization: Interceptor = (next) => (request) => {
    request.contextValues.set(principalKey, { orgId, orgName: "acme", keyId: "key", roles: new Set(["admin"]) });
    return next(request);
  };
  const service = createSourceService({
    db: database.db,
    box,
    // The pool listens on loopback: the operator of this test allows private networks.
    allowPrivateNetwork: true,
    oauthProviders: parseOAuthProviders(
      JSON.stringify({
        google_drive: {
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          client_id: "drive-connector",
          client_secret: "connector-secret",
          token_endpoint_auth_method: "client_secret_post",
          scopes: ["openid", "email"],
          redirect_uris: [REDIRECT_URI],
        },
      }),
    ),
  });
  const transport = createRouterTransport(({ service: serve }) => serve(SourceService, service), {
    router: { interceptors: [asOrganization] },
  });
  return createClient(SourceService, transport);
}

/** The browser: opens the authorization URL, signs in on the hosted page, and answers the redirect. */
async function authorizeInBrowser(url: string): Promise<URL> {
  const toLogin = await fetch(url, { redirect: "manual" });
  expect(toLogin.status).toBe(302);
  const loginPage = new URL(toLogin.headers.get("location")!);
  const html = await (await fetch(loginPage)).text();
  const transaction = /name="transaction" value="([^"]+)"/.exec(html)?.[1];
  expect(transaction).toBeDefined();
  const login = await fetch(new URL("login", loginPage), {
    method: "POST",
    body: new URLSearchParams({ transaction: transaction!, email: EMAIL, password: PASSWORD }),
    redirect: "manual",
  });
  expect(login.status).toBe(303);
  return new URL(login.headers.get("location")!);
}

async function storedSecret(orgId: string, credentialId: string) {
  const row = await createCredentialStore(database.db).get(orgId, credentialId);
  const secret = openCredentialSecret(box, orgId, credentialId, row!.sealedSecret);
  if (secret?.kind !== "oauth") throw new Error("no OAuth secret stored");
  return secret;
}

beforeAll(async () => {
  acme = await createOrganization("source-oauth");
  const admin = acme.client.identityAdmin;
  await admin.createPool({ body: { name: "drive" } });
  await admin.updatePool({
    path: { pool: "drive" },
    body: { settingsJson: JSON.stringify({ redirect_uris: [REDIRECT_URI] }) },
  });
  await admin.createUser({ path: { pool: "drive" }, body: { email: EMAIL, password: PASSWORD } });
  issuer = `${identityUrl()}/${acme.name}/drive`;
  database = await openTestDatabase();
  box = createSecretBox(new Uint8Array(randomBytes(32)));
  orgIds.push(await database.createOrganization(), await database.createOrganization());
});
afterAll(() => database?.close());

describe("source OAuth against an identity pool", () => {
  it("gets the URL, exchanges the code, refreshes, and never answers a token", async () => {
    const orgId = orgIds[0]!;
    const client = sourceClient(orgId);
    const started = await client.getOAuthUrl({ provider: Provider.GOOGLE_DRIVE, redirectUri: REDIRECT_URI });
    const url = new URL(started.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: "drive-connector",
      redirect_uri: REDIRECT_URI,
      scope: "openid email",
      state: started.state,
      code_challenge_method: "S256",
    });
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Number(started.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);

    const callback = await authorizeInBrowser(started.url);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe(started.state);
    const code = callback.searchParams.get("code")!;

    const credential = await client.exchangeOAuthCode({
      provider: Provider.GOOGLE_DRIVE,
      code,
      state: callback.searchParams.get("state")!,
      redirectUri: REDIRECT_URI,
    });
    expect(credential).toMatchObject({
      name: `google_drive: ${EMAIL}`,
      provider: Provider.GOOGLE_DRIVE,
      type: CredentialType.OAUTH,
      scopes: ["openid", "email"],
    });
    // The pool's access tokens live 900 s.
    expect(Number(credential.expiresAt) - Date.now()).toBeGreaterThan(800_000);
    const first = await storedSecret(orgId, credential.credentialId);
    expect(first.accessToken.split(".")).toHaveLength(3);
    expect(first.refreshToken).toBeTruthy();
    const claims = JSON.parse(Buffer.from(first.accessToken.split(".")[1]!, "base64url").toString()) as {
      iss: string;
    };
    expect(claims.iss).toBe(issuer);

    const refreshed = await client.refreshOAuthToken({ credentialId: credential.credentialId });
    expect(refreshed.credentialId).toBe(credential.credentialId);
    expect(refreshed.updatedAt).toBeGreaterThan(credential.updatedAt);
    const second = await storedSecret(orgId, credential.credentialId);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    // The rotated refresh token is the one stored: a second refresh works from it.
    const again = await client.refreshOAuthToken({ credentialId: credential.credentialId });
    const third = await storedSecret(orgId, credential.credentialId);
    expect(third.refreshToken).not.toBe(second.refreshToken);

    const listed = await client.listCredentials({ provider: Provider.GOOGLE_DRIVE });
    expect(listed.credentials.map((c) => c.credentialId)).toEqual([credential.credentialId]);
    const answers = [credential, refreshed, again, ...listed.credentials].map((c) => toJsonString(CredentialSchema, c));
    for (const answer of answers) {
      for (const secret of [first, second, third]) {
        expect(answer).not.toContain(secret.accessToken);
        expect(answer).not.toContain(secret.refreshToken);
      }
    }
    // A code is single use: the provider refuses it again, and (this provider's choice, RFC 9700)
    // revokes what it minted, so the refresh token stored is dead too: the user must reconnect.
    const replay = await client
      .exchangeOAuthCode({ provider: Provider.GOOGLE_DRIVE, code, state: started.state, redirectUri: REDIRECT_URI })
      .catch((error: unknown) => ConnectError.from(error));
    expect(replay).toBeInstanceOf(ConnectError);
    expect((replay as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((replay as ConnectError).rawMessage).toMatch(/invalid_grant/);

    const revoked = await client
      .refreshOAuthToken({ credentialId: credential.credentialId })
      .catch((error: unknown) => ConnectError.from(error));
    expect((revoked as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((revoked as ConnectError).rawMessage).toMatch(/reconnect through GetOAuthUrl/);
  });

  it("refuses a state of another organization, an edited one, and another redirect URI", async () => {
    const [orgA, orgB] = orgIds as [string, string];
    const started = await sourceClient(orgA).getOAuthUrl({
      provider: Provider.GOOGLE_DRIVE,
      redirectUri: REDIRECT_URI,
    });
    const callback = await authorizeInBrowser(started.url);
    const code = callback.searchParams.get("code")!;
    const exchange = (orgId: string, state: string, redirectUri = REDIRECT_URI) =>
      sourceClient(orgId)
        .exchangeOAuthCode({ provider: Provider.GOOGLE_DRIVE, code, state, redirectUri })
        .catch((error: unknown) => ConnectError.from(error));

    const stolen = (await exchange(orgB, started.state)) as ConnectError;
    expect(stolen.code).toBe(Code.InvalidArgument);
    expect(stolen.rawMessage).toMatch(/^state is not a state returned by GetOAuthUrl/);
    const edited = `${started.state.slice(0, -2)}${started.state.endsWith("AA") ? "BB" : "AA"}`;
    expect(((await exchange(orgA, edited)) as ConnectError).code).toBe(Code.InvalidArgument);
    const elsewhere = (await exchange(orgA, started.state, "http://localhost:9999/other")) as ConnectError;
    expect(elsewhere.rawMessage).toBe("redirect_uri differs from the one given to GetOAuthUrl");
    // None of the refusals spent the code: it still exchanges for the organization it was meant for.
    expect(await exchange(orgA, started.state)).toMatchObject({ type: CredentialType.OAUTH });
    expect((await sourceClient(orgB).listCredentials({})).credentials).toEqual([]);
  });
});
