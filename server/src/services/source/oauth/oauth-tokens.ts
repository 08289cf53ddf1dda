import { Code, ConnectError } from "@connectrpc/connect";
import type { Dispatcher } from "undici";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { Database } from "../../../db/database.js";
import { openCredentialSecret, sealCredentialSecret } from "../credential-secret.js";
import { createCredentialStore, type CredentialMetadataRow, type SealedCredentialRow } from "../credential-store.js";
import { providerWireName } from "../provider-names.js";
import { failedPrecondition, invalid, notFound } from "../source-fields.js";
import type { ProviderName } from "../source-schema.js";
import type { OAuthProviderConfig, OAuthProviders } from "./oauth-provider-config.js";
import { requestTokens, TokenEndpointError, type TokenGrant, type TokenSet } from "./oauth-token-client.js";

export interface OAuthTokensOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly providers: OAuthProviders;
  /** Carries the token endpoint calls: the outbound guard unless private networks are allowed. */
  readonly dispatcher: Dispatcher;
  readonly now?: () => number;
}

/**
 * The tokens of OAuth credentials: the token endpoint calls, and refreshes that store the rotated
 * refresh token. Errors are API errors (ConnectError) that never repeat a token.
 */
export interface OAuthTokens {
  /** The operator's registration of a provider; INVALID_ARGUMENT or FAILED_PRECONDITION without one. */
  registration(provider: ProviderName): OAuthProviderConfig;
  /** Posts a grant to the provider's token endpoint. */
  request(provider: ProviderName, grant: TokenGrant, signal?: AbortSignal): Promise<TokenSet>;
  /** Refreshes now and stores the new tokens; answers the credential's metadata. */
  refresh(orgId: string, credentialId: string, signal?: AbortSignal): Promise<CredentialMetadataRow>;
  /**
   * A usable access token for connectors, refreshed first when it expires within `marginMs`
   * (default two minutes): the platform refreshes on its own, before expiry.
   */
  accessToken(
    orgId: string,
    credentialId: string,
    options?: { marginMs?: number; signal?: AbortSignal },
  ): Promise<string>;
}

/** Providers that never connect with OAuth: asking for their URL is INVALID_ARGUMENT, not FAILED_PRECONDITION. */
const NOT_OAUTH: readonly ProviderName[] = ["internal", "amazon_s3", "web"];
const DEFAULT_MARGIN_MS = 2 * 60_000;

export function createOAuthTokens({ db, box, providers, dispatcher, now = Date.now }: OAuthTokensOptions): OAuthTokens {
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

  const request = (provider: ProviderName, grant: TokenGrant, signal?: AbortSignal) =>
    callTokenEndpoint(() => requestTokens(registration(provider), grant, { dispatcher, signal }));

  const oauthRow = async (orgId: string, credentialId: string) => {
    const row = await credentials.get(orgId, credentialId);
    if (!row) throw notFound(`credential ${credentialId} not found`);
    if (row.type !== "oauth")
      throw failedPrecondition(`credential_id: credential ${credentialId} is not an OAuth credential`);
    return { row, secret: oauthSecret(row, orgId) };
  };

  const oauthSecret = (row: SealedCredentialRow, orgId: string) => {
    const secret = openCredentialSecret(box, orgId, row.id, row.sealedSecret);
    if (!secret || secret.kind !== "oauth")
      throw new ConnectError(
        `credential ${row.id} cannot be opened with the server's secret key; reconnect it through GetOAuthUrl`,
        Code.Internal,
      );
    return secret;
  };

  const refresh = async (orgId: string, credentialId: string, signal?: AbortSignal) => {
    const { row, secret } = await oauthRow(orgId, credentialId);
    if (!secret.refreshToken)
      throw failedPrecondition(
        `credential_id: the provider issued no refresh token for credential ${credentialId}; reconnect through GetOAuthUrl`,
      );
    const tokens = await request(
      row.provider,
      { grant_type: "refresh_token", refresh_token: secret.refreshToken },
      signal,
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
    if (rotated) return rotated;
    // Another refresh stored its tokens first (or the credential was deleted meanwhile): its
    // tokens are as fresh as these, so its row is the answer.
    const current = await credentials.get(orgId, credentialId);
    if (!current) throw notFound(`credential ${credentialId} not found`);
    const { sealedSecret: _sealed, ...metadata } = current;
    return metadata;
  };

  return {
    registration,
    request,
    refresh,
    async accessToken(orgId, credentialId, { marginMs = DEFAULT_MARGIN_MS, signal } = {}) {
      const { row, secret } = await oauthRow(orgId, credentialId);
      const fresh = row.expiresAt === 0 || row.expiresAt - marginMs > now();
      if (fresh || !secret.refreshToken) return secret.accessToken;
      await refresh(orgId, credentialId, signal);
      return (await oauthRow(orgId, credentialId)).secret.accessToken;
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

export function expiryOf(tokens: TokenSet, now: number): number {
  return tokens.expiresIn === undefined ? 0 : now + tokens.expiresIn * 1000;
}
