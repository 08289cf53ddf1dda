import type { Dispatcher } from "undici";
import type { SourceServiceImplementation } from "../../../../gen/platform/data/source/v1/source_service_server.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import { createGuardedDispatcher } from "../../net/private-network.js";
import { createCredentialMethods } from "./credential-methods.js";
import type { OAuthProviders } from "./oauth/oauth-provider-config.js";
import { createOAuthMethods } from "./oauth-methods.js";
import { createSourceMethods } from "./source-methods.js";

export interface SourceServiceOptions {
  readonly db: Database;
  /** Seals credential secrets and OAuth states. */
  readonly box: SecretBox;
  /** The operator's OAuth registrations (config.oauthProviders); none means OAuth is off. */
  readonly oauthProviders?: OAuthProviders;
  /** --allow-private-network: token endpoints may then be loopback or private addresses. */
  readonly allowPrivateNetwork: boolean;
  /** Carries token endpoint calls; default the outbound guard (or a plain agent when private networks are allowed). */
  readonly dispatcher?: Dispatcher;
  /** Whether the organization has the bucket; without it every bucket name is taken as existing. */
  readonly bucketExists?: (orgId: string, bucket: string) => Promise<boolean>;
  /** Whether ingest rules still route the source; DeleteSource refuses while they do. */
  readonly sourceInUse?: (orgId: string, bucket: string, sourceId: string) => Promise<boolean>;
  /** The clock of OAuth state expiry; tests move it. */
  readonly now?: () => number;
}

/** The source service: sources of buckets, the organization's credentials, and OAuth connections. */
export function createSourceService(options: SourceServiceOptions): SourceServiceImplementation {
  const dispatcher =
    options.dispatcher ?? createGuardedDispatcher({ allowPrivateNetwork: options.allowPrivateNetwork });
  return {
    ...createSourceMethods(options),
    ...createCredentialMethods(options),
    ...createOAuthMethods({
      db: options.db,
      box: options.box,
      providers: options.oauthProviders ?? new Map(),
      dispatcher,
      now: options.now,
    }),
  };
}
