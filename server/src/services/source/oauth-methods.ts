import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Dispatcher } from "undici";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import { checkSourceFor, credentialMessage } from "./credential-methods.js";
import { openCredentialSecret, sealCredentialSecret } from "./credential-secret.js";
import { createCredentialStore } from "./credential-store.js";
import { SCOPE_TOKEN, type OAuthProviderConfig, type OAuthProviders } from "./oauth/oauth-provider-config.js";
import {
  codeChallenge,
  newCodeVerifier,
  OAUTH_STATE_LIFETIME_MS,
  OAuthStateError,
  openOAuthState,
  sealOAuthState,
} from "./oauth/oauth-state.js";
import { requestTokens, TokenEndpointError, type TokenSet } from "./oauth/oauth-token-client.js";
import { providerWireName } from "./provider-names.js";
import {
  failedPrecondition,
  hasControlCharacter,
  invalid,
  notFound,
  optionalId,
  validId,
  validName,
  validProvider,
} from "./source-fields.js";
import type { ProviderName } from "./source-schema.js";

export interface OAuthMethodsOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly providers: OAuthProviders;
  /** Carries the token endpoint calls: the outbound guard unless private networks are allowed. */
  readonly dispatcher: Dispatcher;
  readonly now?: () => number;
}

type OAuthMethods = Pick<SourceServiceImplementation, "getOAuthUrl" | "exchangeOAuthCode" | "refreshOAuthToken">;

/** Providers that never connect with OAuth: asking for their URL is INVALID_ARGUMENT, not FAILED_PRECONDITION. */
const NOT_OAUTH: readonly ProviderName[] = ["internal", "amazon_s3", "web"];
const MAX_SCOPES = 50;

/**
 * The authorization code flow with PKCE against any OAuth 2.0 provider the operator registered.
 * GetOAuthUrl stores nothing (the state is sealed and carries the verifier); the exchange and each
 * refresh store the tokens sealed as an OAuth credential, and no answer carries a token.
 */
export function createOAuthMethods({
  db,
  box,
  providers,
  dispatcher,
  now = Date.now,
}: OAuthMethodsOptions): OAuthMethods {
  const credentials = createCredentialStore(db);

  const registration = (provider: ProviderName): OAuthProviderConfig => {
    if (NOT_OAUTH.includes(provider))
      throw invalid(`provider: ${providerWireName(provider)} does not connect with OAuth`);
    const found = providers.get(provider);
    if (!found)
      throw failedPrecondition(
        `provider: OAuth for ${providerWireName(provider)} is not configured on this server (see --oauth-providers-file)`,
      );
    return found;
  };

  return {
    async getOAuthUrl(request, context) {
      const { orgId } = principalOf(context);
      const provider = validProvider(request.provider);
      const config = registration(provider);
      if (request.redirectUri === "") throw invalid("redirect_uri is required");
      if (!config.redirectUris.includes(request.redirectUri))
        throw invalid(`redirect_uri is not one of the redirect URIs configured for ${providerWireName(provider)}`);
      const sourceId = await checkSourceFor(db, orgId, provider, optionalId(request.sourceId, "source_id"));
      if (request.scopes.length > MAX_SCOPES) throw invalid(`scopes holds more than ${MAX_SCOPES} scopes`);
      request.scopes.forEach((scope, index) => {
        if (!SCOPE_TOKEN.test(scope)) throw invalid(`scopes[${index}] is not a valid OAuth scope`);
      });
      const scopes = request.scopes.length > 0 ? request.scopes : config.scopes;
      const verifier = newCodeVerifier();
      const expiresAt = now() + OAUTH_STATE_LIFETIME_MS;
      const state = sealOAuthState(box, orgId, {
        provider,
        redirectUri: request.redirectUri,
        sourceId,
        scopes,
        verifier,
        expiresAt,
      });
      const url = new URL(config.authorizationEndpoint);
      const params: Record<string, string> = {
        ...config.authorizationParams,
        response_type: "code",
        client_id: config.clientId,
        redirect_uri: request.redirectUri,
        ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
        state,
        code_challenge: codeChallenge(verifier),
        code_challenge_method: "S256",
      };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return { url: url.toString(), state, expiresAt: BigInt(expiresAt) };
    },

    async exchangeOAuthCode(request, context) {
      const { orgId } = principalOf(context);
      const provider = validProvider(request.provider);
      if (request.code === "") throw invalid("code is required");
      if (request.state === "") throw invalid("state is required");
      if (request.redirectUri === "") throw invalid("redirect_uri is required");
      const name = request.name === "" ? undefined : validName(request.name);
      let state;
      try {
        state = openOAuthState(box, orgId, request.state, now());
      } catch (error) {
        if (error instanceof OAuthStateError) throw invalid(error.message);
        throw error;
      }
      if (state.provider !== provider) throw invalid("provider is not the one the state was issued for");
      if (state.redirectUri !== request.redirectUri)
        throw invalid("redirect_uri differs from the one given to GetOAuthUrl");
      const config = registration(provider);
      const tokens = await callTokenEndpoint(() =>
        requestTokens(
          config,
          {
            grant_type: "authorization_code",
            code: request.code,
            redirect_uri: state.redirectUri,
            code_verifier: state.verifier,
          },
          { dispatcher, signal: context.signal },
        ),
      );
      // The source may have gone while the user was at the provider: the credential is then unbound.
      const sourceId =
        state.sourceId === undefined
          ? undefined
          : await checkSourceFor(db, orgId, provider, state.sourceId).catch(() => undefined);
      const id = randomUUID();
      const created = await credentials.insert(orgId, {
        id,
        name: name ?? defaultName(provider, tokens),
        provider,
        type: "oauth",
        sourceId: sourceId ?? null,
        scopes: tokens.scopes ?? state.scopes,
        expiresAt: expiryOf(tokens, now()),
        sealedSecret: sealCredentialSecret(box, orgId, id, {
          kind: "oauth",
          accessToken: tokens.accessToken,
          tokenType: tokens.tokenType,
          ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        }),
      });
      return credentialMessage(created);
    },

    async refreshOAuthToken(request, context) {
      const { orgId } = principalOf(context);
      const credentialId = validId(request.credentialId, "credential_id");
      const row = await credentials.get(orgId, credentialId);
      if (!row) throw notFound(`credential ${credentialId} not found`);
      if (row.type !== "oauth")
        throw failedPrecondition(`credential_id: credential ${credentialId} is not an OAuth credential`);
      const secret = openCredentialSecret(box, orgId, credentialId, row.sealedSecret);
      if (!secret || secret.kind !== "oauth")
        throw new ConnectError(
          `credential ${credentialId} cannot be opened with the server's secret key; reconnect it through GetOAuthUrl`,
          Code.Internal,
        );
      if (!secret.refreshToken)
        throw failedPrecondition(
          `credential_id: the provider issued no refresh token for credential ${credentialId}; reconnect through GetOAuthUrl`,
        );
      const config = registration(row.provider);
      const tokens = await callTokenEndpoint(() =>
        requestTokens(
          config,
          { grant_type: "refresh_token", refresh_token: secret.refreshToken! },
          { dispatcher, signal: context.signal },
        ),
      );
      const rotated = await credentials.rotate(orgId, credentialId, row.updatedAt, {
        scopes: tokens.scopes ?? row.scopes,
        expiresAt: expiryOf(tokens, now()),
        sealedSecret: sealCredentialSecret(box, orgId, credentialId, {
          kind: "oauth",
          accessToken: tokens.accessToken,
          tokenType: tokens.tokenType,
          // A provider that does not rotate refresh tokens answers none: the old one stays valid.
          refreshToken: tokens.refreshToken ?? secret.refreshToken,
        }),
      });
      if (rotated) return credentialMessage(rotated);
      // Another refresh stored its tokens first (or the credential was deleted meanwhile): its
      // tokens are as fresh as these, so its row is the answer.
      const current = await credentials.get(orgId, credentialId);
      if (!current) throw notFound(`credential ${credentialId} not found`);
      return credentialMessage(current);
    },
  };
}

/** Token endpoint failures as API errors; none repeats what the provider said beyond its error code. */
async function callTokenEndpoint(call: () => Promise<TokenSet>): Promise<TokenSet> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof TokenEndpointError)) throw error;
    if (error.kind === "refused") {
      const advice = error.oauthError === "invalid_grant" ? ": reconnect through GetOAuthUrl" : "";
      throw failedPrecondition(`${error.message}${advice}`);
    }
    if (error.kind === "unreachable") throw new ConnectError(error.message, Code.Unavailable);
    throw failedPrecondition(error.message);
  }
}

function expiryOf(tokens: TokenSet, now: number): number {
  return tokens.expiresIn === undefined ? 0 : now + tokens.expiresIn * 1000;
}

/**
 * "The provider and the connected account": the account from the ID token when the provider sent
 * one. It came straight from the token endpoint over the connection just made, and only names the
 * credential, so its signature is not checked.
 */
function defaultName(provider: ProviderName, tokens: TokenSet): string {
  const label = providerWireName(provider)
    .replace(/^PROVIDER_/, "")
    .toLowerCase();
  const account = accountOf(tokens.idToken);
  return account ? `${label}: ${account}` : label;
}

function accountOf(idToken: string | undefined): string | undefined {
  const payload = idToken?.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const account = [claims.email, claims.preferred_username, claims.sub].find(
      (value): value is string => typeof value === "string" && value !== "",
    );
    return account && !hasControlCharacter(account) ? account.slice(0, 150) : undefined;
  } catch {
    return undefined;
  }
}
