import type { Database } from "../../db/database.js";
import type { Logger } from "../../log/logger.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { createAuthorizationCodes, type AuthorizationCodes } from "./authorization-codes.js";
import { connectionActive, createConnectionStore, type ConnectionStore } from "./connection-store.js";
import { createEmailTokens, type EmailTokens } from "./email-tokens.js";
import { createMailOutbox, type MailOutbox } from "./mail-outbox.js";
import { createPoolCache, type PoolCache } from "./pool-cache.js";
import { createPoolKeys, type PoolKeys } from "./pool-keys.js";
import { poolRefOf, type PoolRecord, type PoolRef } from "./pool-store.js";
import { readPoolSettings, type PoolSettings } from "./pool-settings.js";
import { poolIssuer, type PoolIssuer } from "./pool-tokens.js";
import { createRefreshFamilies, type RefreshFamilies } from "./refresh-families.js";
import type { MailSender } from "./smtp-mail-sender.js";
import { createTenantStore, type TenantStore } from "./tenant-store.js";
import type { UserStoreConnection } from "./postgres-user-store.js";
import { createUserStoreDirectory, type UserStoreDirectory } from "./user-store-directory.js";
import type { UserStore } from "./user-store.js";

/** The service-wide parts the issuer's operations share, made once at start-up. */
export interface IdentityServices {
  readonly db: Database;
  readonly keys: PoolKeys;
  readonly families: RefreshFamilies;
  readonly codes: AuthorizationCodes;
  readonly emailTokens: EmailTokens;
  readonly outbox: MailOutbox;
  readonly connections: ConnectionStore;
  /** Where each pool's users live (the platform database or the pool's own); close it on shutdown. */
  readonly userStores: UserStoreDirectory;
  /** Pools the issuer resolved recently; the admin plane forgets the ones it writes. */
  readonly poolCache: PoolCache;
  readonly now: () => number;
}

export function createIdentityServices(
  db: Database,
  box: SecretBox,
  options: {
    readonly logger: Logger;
    readonly sender?: MailSender | undefined;
    readonly now?: () => number;
    /** How a pool's `postgres://` user store is reached; tests hand in other databases. */
    readonly connectUserStore?: (url: string) => UserStoreConnection;
  },
): IdentityServices {
  const now = options.now ?? Date.now;
  return {
    db,
    keys: createPoolKeys(db, box),
    families: createRefreshFamilies(db, box, { now }),
    codes: createAuthorizationCodes(db, { now }),
    emailTokens: createEmailTokens(db, { now }),
    outbox: createMailOutbox(db, box, { logger: options.logger, sender: options.sender, now }),
    connections: createConnectionStore(db),
    userStores: createUserStoreDirectory(db, box, {
      now,
      ...(options.connectUserStore ? { connect: options.connectUserStore } : {}),
    }),
    poolCache: createPoolCache(),
    now,
  };
}

/** One pool as a request sees it: its record, issuer, settings and stores. */
export interface PoolContext {
  readonly record: PoolRecord;
  readonly ref: PoolRef;
  readonly issuer: PoolIssuer;
  readonly settings: PoolSettings;
  readonly users: UserStore;
  /** The managed store: the users share the platform database with sessions and tenants. */
  readonly usersInPlatformDatabase: boolean;
  readonly tenants: TenantStore;
}

/**
 * Resolves a pool for a request. The user store is chosen here, from the pool's record: the managed
 * store, or the pool's own `postgres://` database (see user-store-directory.ts).
 */
export function poolContext(
  services: IdentityServices,
  identityUrl: string,
  organization: string,
  record: PoolRecord,
): PoolContext {
  const ref = poolRefOf(record);
  const users = services.userStores.users(ref, { description: record.userStore, sealedUrl: record.sealedUserStoreUrl });
  const usersInPlatformDatabase = record.userStore.kind === "managed";
  return {
    record,
    ref,
    issuer: poolIssuer(identityUrl, organization, record),
    settings: readPoolSettings(record.settings, record.policies),
    users,
    usersInPlatformDatabase,
    tenants: createTenantStore(services.db, ref, usersInPlatformDatabase ? undefined : users),
  };
}

/**
 * How the pool's `local` connection (e-mail and password) stands. A pool without the row has it
 * open (a new pool works at once); `enabled: false` closes it. `{"password_grant": false}` in its
 * configuration closes only the direct password grant, for pools that want every sign-in on
 * their hosted page, where PKCE binds the result to the client.
 */
export async function localSignIn(
  services: IdentityServices,
  pool: PoolRef,
): Promise<{ readonly open: boolean; readonly passwordGrant: boolean }> {
  const local = await services.connections.get(pool, "local");
  return {
    open: local === undefined || connectionActive(local),
    passwordGrant: local?.config.password_grant !== false,
  };
}
