import { isForeignKeyViolation } from "../../db/sql-state.js";
import { randomUUID } from "node:crypto";
import type { Dispatcher } from "undici";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import { checkSourceFor, credentialMessage } from "./credential-methods.js";
import { sealCredentialSecret } from "./credential-secret.js";
import { createCredentialStore } from "./credential-store.js";
import { SCOPE_TOKEN, type OAuthProviders } from "./oauth/oauth-provider-config.js";
import {
  codeChallenge,
  newCodeVerifier,
  OAUTH_STATE_LIFETIME_MS,
  OAuthStateError,
  openOAuthState,
  sealOAuthState,
} from "./oauth/oauth-state.js";
import type { TokenSet } from "./oauth/oauth-token-client.js";
import { createOAuthTokens, expiryOf } from "./oauth/oauth-tokens.js";
import { providerWireName } from "./provider-names.js";
import { hasControlCharacter, invalid, optionalId, validId, validName, validProvider } from "./source-fields.js";
import type { ProviderName } from "./source-schema.js";
import { createSourceStore } from "./source-store.js";

export interface OAuthMethodsOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly providers: OAuthProviders;
  /** Carries the token endpoint calls: the outbound guard unless private networks are allowed. */
  readonly dispatcher: Dispatcher;
  readonly now?: () => number;
}

type OAuthMethods = Pick<SourceServiceImplementation, "getOAuthUrl" | "exchangeOAuthCode" | "refreshOAuthToken">;

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

  const tokenCalls = createOAuthTokens({ db, box, providers, dispatcher, now });
  const registration = tokenCalls.registration;

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
      const tokens = await tokenCalls.request(
        provider,
        {
          grant_type: "authorization_code",
          code: request.code,
          redirect_uri: state.redirectUri,
          code_verifier: state.verifier,
        },
        context.signal,
      );
      // The tokens are in hand and the code is spent: whatever happened to the source meanwhile,
      // they are stored. A source deleted while the user was at the provider leaves the credential
      // unbound (its provider was checked when the URL was made, and never changes).
      const bound =
        state.sourceId === undefined ? undefined : await createSourceStore(db).getAnyBucket(orgId, state.sourceId);
      const id = randomUUID();
      const insert = (sourceId: string | null) =>
        credentials.insert(orgId, {
          id,
          name: name ?? defaultName(provider, tokens),
          provider,
          type: "oauth",
          sourceId,
          scopes: tokens.scopes ?? state.scopes,
          expiresAt: expiryOf(tokens, now()),
          sealedSecret: sealCredentialSecret(box, orgId, id, {
            kind: "oauth",
            accessToken: tokens.accessToken,
            tokenType: tokens.tokenType,
            ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
          }),
        });
      const created = await insert(bound?.id ?? null).catch((error: unknown) => {
        if (isForeignKeyViolation(error)) return insert(null);
        throw error;
      });
      return credentialMessage(created);
    },

    async refreshOAuthToken(request, context) {
      const { orgId } = principalOf(context);
      const credentialId = validId(request.credentialId, "credential_id");
      return credentialMessage(await tokenCalls.refresh(orgId, credentialId, context.signal));
    },
  };
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
