import type { Database } from "../../db/database.js";
import type { Logger } from "../../transport/logger.js";
import type { SecretBox } from "../secrets/secret-box.js";
import { createAuthorizationCodes, type AuthorizationCodes } from "./authorization-codes.js";
import { connectionActive, createConnectionStore, type ConnectionStore } from "./connection-store.js";
import { createEmailTokens, type EmailTokens } from "./email-tokens.js";
import { createMailOutbox, type MailOutbox } from "./mail-outbox.js";
import { createPoolKeys, type PoolKeys } from "./pool-keys.js";
import { poolRefOf, type PoolRecord, type PoolRef } from "./pool-store.js";
import { readPoolSettings, type PoolSettings } from "./pool-settings.js";
import { poolIssuer, type PoolIssuer } from "./pool-tokens.js";
import { createRefreshFamilies, type RefreshFamilies } from "./refresh-families.js";
import type { MailSender } from "./smtp-mail-sender.js";
import { createTenantStore, type TenantStore } from "./tenant-store.js";
import { createManagedUserStore, type UserStore } from "./user-store.js";

/** The service-wide parts the issuer's operations share, made once at start-up. */
export interface IdentityServices {
  readonly db: Database;
  readonly keys: PoolKeys;
  readonly families: RefreshFamilies;
  readonly codes: AuthorizationCodes;
  readonly emailTokens: EmailTokens;
  readonly outbox: MailOutbox;
  readonly connections: ConnectionStore;
  readonly now: () => number;
}

export function createIdentityServices(
  db: Database,
  box: SecretBox,
  options: { readonly logger: Logger; readonly sender?: MailSender | undefined; readonly now?: () => number },
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
  readonly tenants: TenantStore;
}

/**
 * Resolves a pool for a request. The user store is chosen here, from the pool's record, so that a
 * pool kept in another store later changes this one place; today every pool uses the managed store.
 */
export function poolContext(services: IdentityServices, identityUrl: string, organization: string, record: PoolRecord): PoolContext {
  const ref = poolRefOf(record);
  return {
    record,
    ref,
    issuer: poolIssuer(identityUrl, organization, record),
    settings: readPoolSettings(record.settings, record.policies),
    users: createManagedUserStore(services.db, ref, { now: services.now }),
    tenants: createTenantStore(services.db, ref),
  };
}

/**
 * Whether e-mail and password sign-in is open: a pool without a `local` connection row has it (a
 * new pool works at once); a row switches it off with `enabled: false`.
 */
export async function localSignInOpen(services: IdentityServices, pool: PoolRef): Promise<boolean> {
  const local = await services.connections.get(pool, "local");
  return local === undefined || connectionActive(local);
}
