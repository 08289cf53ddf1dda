import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { text } from "node:stream/consumers";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialSchema, CredentialType, Provider } from "../../../../gen/platform/data/source/v1/source_pb.js";
import {
  ExchangeOAuthCodeRequestSchema,
  GetOAuthUrlRequestSchema,
  GetOAuthUrlResponseSchema,
  RefreshOAuthTokenRequestSchema,
  StoreCredentialRequestSchema,
} from "../../../../gen/platform/data/source/v1/source_service_pb.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretBox } from "../../crypto/secret-box.js";
import { parseOAuthProviders } from "./oauth/oauth-provider-config.js";
import { createOAuthTokens } from "./oauth/oauth-tokens.js";
import { Agent } from "undici";
import { createSourceService } from "./source-handlers.js";
import { Code, connectErrorOf, sourceContextOf } from "./source-test-context.js";

// The OAuth methods against a token endpoint on loopback that checks what a provider checks
// (client authentication, PKCE) and answers as the test tells it to.

const REDIRECT = "https://app.example.com/callback";
let database: TestDatabase;
let server: Server;
let base: string;
let clock = Date.now();
/** What the token endpoint answers next; by default tokens with a rotated refresh token. */
let tokenAnswer: (form: URLSearchParams) => { status: number; body: unknown } = () => ({ status: 500, body: {} });
const tokenRequests: { form: URLSearchParams; authorization: string | undefined }[] = [];
/** code -> the challenge it was issued for. */
const codes = new Map<string, string>();

async function answer(request: IncomingMessage, response: ServerResponse) {
  const form = new URLSearchParams(await text(request));
  tokenRequests.push({ form, authorization: request.headers.authorization });
  const { status, body } = tokenAnswer(form);
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** A provider that checks PKCE and rotates refresh tokens. */
function provider(form: URLSearchParams) {
  if (form.get("grant_type") === "authorization_code") {
    const challenge = codes.get(form.get("code") ?? "");
    const verifier = form.get("code_verifier") ?? "";
    if (!challenge || createHash("sha256").update(verifier).digest("base64url") !== challenge)
      return { status: 400, body: { error: "invalid_grant", error_description: `bad verifier ${verifier}` } };
    return { status: 200, body: tokens("refresh-1") };
  }
  const previous = form.get("refresh_token") ?? "";
  return { status: 200, body: tokens(`${previous}+`) };
}
const tokens = (refresh: string | undefined) => ({
  access_token: `access-${randomBytes(6).toString("hex")}`,
  token_type: "Bearer",
  expires_in: 3600,
  scope: "files.read offline",
  ...(refresh ? { refresh_token: refresh } : {}),
});

function config(extra: object = {}) {
  return parseOAuthProviders(
    JSON.stringify({
      dropbox: {
        authorization_endpoint: "https://auth.example.com/oauth2/authorize?locale=en",
        token_endpoint: `${base}/token`,
        client_id: "client one",
        client_secret: "s3cr:t",
        scopes: ["files.read"],
        redirect_uris: [REDIRECT],
        authorization_params: { token_access_type: "offline" },
        ...extra,
      },
    }),
  );
}

function serviceWith(options: { allowPrivateNetwork?: boolean; extra?: object } = {}) {
  return createSourceService({
    db: database.db,
    box,
    allowPrivateNetwork: options.allowPrivateNetwork ?? true,
    oauthProviders: config(options.extra),
    now: () => clock,
  });
}
const box = createSecretBox(new Uint8Array(randomBytes(32)));

beforeAll(async () => {
  database = await openTestDatabase();
  server = createServer((request, response) => void answer(request, response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database.close();
});

async function caller(service = serviceWith()) {
  const orgId = await database.createOrganization();
  const context = sourceContextOf(orgId);
  return {
    orgId,
    getOAuthUrl: async (init: MessageInitShape<typeof GetOAuthUrlRequestSchema>) =>
      create(GetOAuthUrlResponseSchema, await service.getOAuthUrl(create(GetOAuthUrlRequestSchema, init), context)),
    exchange: async (init: MessageInitShape<typeof ExchangeOAuthCodeRequestSchema>) =>
      create(CredentialSchema, await service.exchangeOAuthCode(create(ExchangeOAuthCodeRequestSchema, init), context)),
    refresh: async (credentialId: string) =>
      create(
        CredentialSchema,
        await service.refreshOAuthToken(create(RefreshOAuthTokenRequestSchema, { credentialId }), context),
      ),
    storeToken: async () =>
      create(
        CredentialSchema,
        await service.storeCredential(
          create(StoreCredentialRequestSchema, {
            name: "t",
            provider: Provider.DROPBOX,
            secret: { case: "token", value: "t" },
          }),
          context,
        ),
      ),
  };
}

/** GetOAuthUrl, then the provider's half: a code issued for the URL's challenge. */
async function authorize(org: Awaited<ReturnType<typeof caller>>) {
  const started = await org.getOAuthUrl({ provider: Provider.DROPBOX, redirectUri: REDIRECT });
  const code = `code-${randomBytes(4).toString("hex")}`;
  codes.set(code, new URL(started.url).searchParams.get("code_challenge")!);
  return { started, code };
}

describe(`OAuth methods (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("builds the authorization URL from the registration", async () => {
    const org = await caller();
    const { started } = await authorize(org);
    const url = new URL(started.url);
    expect(`${url.origin}${url.pathname}`).toBe("https://auth.example.com/oauth2/authorize");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      locale: "en",
      token_access_type: "offline",
      response_type: "code",
      client_id: "client one",
      redirect_uri: REDIRECT,
      scope: "files.read",
      state: started.state,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
    });
    expect(started.expiresAt).toBe(BigInt(clock + 10 * 60_000));
    const custom = await org.getOAuthUrl({ provider: Provider.DROPBOX, redirectUri: REDIRECT, scopes: ["a", "b:c"] });
    expect(new URL(custom.url).searchParams.get("scope")).toBe("a b:c");
  });

  it("exchanges with client_secret_basic and the verifier, and refreshes storing the rotated token", async () => {
    tokenAnswer = provider;
    const org = await caller();
    const { started, code } = await authorize(org);
    tokenRequests.length = 0;
    const credential = await org.exchange({
      provider: Provider.DROPBOX,
      code,
      state: started.state,
      redirectUri: REDIRECT,
      name: "team",
    });
    expect(credential).toMatchObject({
      name: "team",
      type: CredentialType.OAUTH,
      scopes: ["files.read", "offline"],
      expiresAt: BigInt(clock + 3_600_000),
    });
    const [request] = tokenRequests;
    // RFC 6749 2.3.1: form-encoded, then base64: "client one" -> client+one, "s3cr:t" -> s3cr%3At.
    expect(request!.authorization).toBe(`Basic ${Buffer.from("client+one:s3cr%3At").toString("base64")}`);
    expect(request!.form.get("client_secret")).toBeNull();
    expect(request!.form.get("redirect_uri")).toBe(REDIRECT);

    await org.refresh(credential.credentialId);
    await org.refresh(credential.credentialId);
    expect(tokenRequests.slice(1).map((r) => r.form.get("refresh_token"))).toEqual(["refresh-1", "refresh-1+"]);
  });

  it("keeps the refresh token when the provider does not rotate it, and sends client_secret_post", async () => {
    tokenAnswer = (form) =>
      form.get("grant_type") === "refresh_token" ? { status: 200, body: tokens(undefined) } : provider(form);
    const org = await caller(serviceWith({ extra: { token_endpoint_auth_method: "client_secret_post" } }));
    const { started, code } = await authorize(org);
    const credential = await org.exchange({
      provider: Provider.DROPBOX,
      code,
      state: started.state,
      redirectUri: REDIRECT,
    });
    expect(credential.name).toBe("dropbox");
    tokenRequests.length = 0;
    await org.refresh(credential.credentialId);
    await org.refresh(credential.credentialId);
    expect(tokenRequests.map((r) => r.form.get("refresh_token"))).toEqual(["refresh-1", "refresh-1"]);
    expect(tokenRequests[0]!.form.get("client_secret")).toBe("s3cr:t");
    expect(tokenRequests[0]!.authorization).toBeUndefined();
  });

  it("maps what the provider answers to API errors without repeating its description", async () => {
    const org = await caller();
    tokenAnswer = provider;
    const { started, code } = await authorize(org);
    const exchange = (state = started.state) =>
      connectErrorOf(() => org.exchange({ provider: Provider.DROPBOX, code, state, redirectUri: REDIRECT }));
    tokenAnswer = () => ({
      status: 400,
      body: { error: "invalid_grant", error_description: "bad verifier secret-ish" },
    });
    const refused = await exchange();
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.rawMessage).toBe("the provider refused the grant (invalid_grant): reconnect through GetOAuthUrl");
    tokenAnswer = () => ({ status: 503, body: {} });
    expect((await exchange()).code).toBe(Code.Unavailable);
    tokenAnswer = () => ({ status: 200, body: { token_type: "bearer" } });
    expect((await exchange()).rawMessage).toMatch(/no access_token/);

    // Private networks refused: the loopback token endpoint is never contacted.
    tokenAnswer = provider;
    const guarded = await caller(serviceWith({ allowPrivateNetwork: false }));
    const blocked = await authorize(guarded);
    tokenRequests.length = 0;
    const error = await connectErrorOf(() =>
      guarded.exchange({
        provider: Provider.DROPBOX,
        code: blocked.code,
        state: blocked.started.state,
        redirectUri: REDIRECT,
      }),
    );
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toMatch(/loopback/);
    expect(tokenRequests).toEqual([]);
  });

  it("refuses an expired state, another provider's, and states of another organization", async () => {
    tokenAnswer = provider;
    const org = await caller();
    const other = await caller();
    const { started, code } = await authorize(org);
    const request = { provider: Provider.DROPBOX, code, state: started.state, redirectUri: REDIRECT };
    expect((await connectErrorOf(() => other.exchange(request))).rawMessage).toMatch(/^state is not a state returned/);
    expect((await connectErrorOf(() => org.exchange({ ...request, provider: Provider.BOX }))).rawMessage).toBe(
      "provider is not the one the state was issued for",
    );
    expect((await connectErrorOf(() => org.exchange({ ...request, state: "!!" }))).rawMessage).toMatch(/^state is not/);
    clock += 10 * 60_000 + 1;
    try {
      const expired = await connectErrorOf(() => org.exchange(request));
      expect(expired.code).toBe(Code.InvalidArgument);
      expect(expired.rawMessage).toMatch(/^state has expired/);
    } finally {
      clock -= 10 * 60_000 + 1;
    }
    expect(await org.exchange(request)).toMatchObject({ type: CredentialType.OAUTH });
  });

  it("rejects bad requests with the field named", async () => {
    const org = await caller();
    const url = (init: MessageInitShape<typeof GetOAuthUrlRequestSchema>) =>
      connectErrorOf(() => org.getOAuthUrl(init));
    expect((await url({ redirectUri: REDIRECT })).rawMessage).toBe("provider is required");
    const s3 = await url({ provider: Provider.AMAZON_S3, redirectUri: REDIRECT });
    expect([s3.code, s3.rawMessage]).toEqual([
      Code.InvalidArgument,
      "provider: PROVIDER_AMAZON_S3 does not connect with OAuth",
    ]);
    const unconfigured = await url({ provider: Provider.SLACK, redirectUri: REDIRECT });
    expect(unconfigured.code).toBe(Code.FailedPrecondition);
    expect(unconfigured.rawMessage).toMatch(/^provider: OAuth for PROVIDER_SLACK is not configured/);
    expect((await url({ provider: Provider.DROPBOX })).rawMessage).toBe("redirect_uri is required");
    expect((await url({ provider: Provider.DROPBOX, redirectUri: "https://evil.example/cb" })).rawMessage).toMatch(
      /^redirect_uri is not one of the redirect URIs configured/,
    );
    expect(
      (await url({ provider: Provider.DROPBOX, redirectUri: REDIRECT, scopes: ["ok", "bad scope"] })).rawMessage,
    ).toBe("scopes[1] is not a valid OAuth scope");
    const exchange = (init: MessageInitShape<typeof ExchangeOAuthCodeRequestSchema>) =>
      connectErrorOf(() => org.exchange(init));
    expect((await exchange({ provider: Provider.DROPBOX, state: "s", redirectUri: REDIRECT })).rawMessage).toBe(
      "code is required",
    );
    expect((await exchange({ provider: Provider.DROPBOX, code: "c", redirectUri: REDIRECT })).rawMessage).toBe(
      "state is required",
    );
    expect((await exchange({ provider: Provider.DROPBOX, code: "c", state: "s" })).rawMessage).toBe(
      "redirect_uri is required",
    );
  });

  it("hands connectors a usable access token, refreshing it shortly before it expires", async () => {
    tokenAnswer = provider;
    const org = await caller();
    const { started, code } = await authorize(org);
    const credential = await org.exchange({
      provider: Provider.DROPBOX,
      code,
      state: started.state,
      redirectUri: REDIRECT,
    });
    const tokens = createOAuthTokens({
      db: database.db,
      box,
      providers: config(),
      dispatcher: new Agent(),
      now: () => clock,
    });
    tokenRequests.length = 0;
    const first = await tokens.accessToken(org.orgId, credential.credentialId);
    expect(first).toMatch(/^access-/);
    expect(tokenRequests).toEqual([]);
    clock += 3_600_000 - 60_000;
    try {
      const second = await tokens.accessToken(org.orgId, credential.credentialId);
      expect(second).not.toBe(first);
      expect(tokenRequests.map((r) => r.form.get("grant_type"))).toEqual(["refresh_token"]);
      expect(await tokens.accessToken(org.orgId, credential.credentialId)).toBe(second);
      expect(tokenRequests).toHaveLength(1);
    } finally {
      clock -= 3_600_000 - 60_000;
    }
    const other = await database.createOrganization();
    expect((await connectErrorOf(() => tokens.accessToken(other, credential.credentialId))).code).toBe(Code.NotFound);
  });

  it("refreshes only the organization's own OAuth credentials", async () => {
    tokenAnswer = provider;
    const org = await caller();
    const other = await caller();
    const { started, code } = await authorize(org);
    const credential = await org.exchange({
      provider: Provider.DROPBOX,
      code,
      state: started.state,
      redirectUri: REDIRECT,
    });
    expect((await connectErrorOf(() => other.refresh(credential.credentialId))).code).toBe(Code.NotFound);
    const token = await org.storeToken();
    const notOAuth = await connectErrorOf(() => org.refresh(token.credentialId));
    expect(notOAuth.code).toBe(Code.FailedPrecondition);
    expect(notOAuth.rawMessage).toMatch(/is not an OAuth credential/);
    expect((await connectErrorOf(() => org.refresh("x"))).rawMessage).toBe("credential_id must be a UUID");
  });
});
