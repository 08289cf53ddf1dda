import type { Migration, Pool, UserStore } from "../../../../../gen/openapi/identity-admin/types.js";
import type { PoolMigration, UserStoreDescription } from "../identity-schema.js";
import { poolIssuer } from "../pool-tokens.js";
import type { PoolRecord } from "../pool-store.js";
import type { AdminDeps } from "./admin-pool-access.js";

const kinds: Record<UserStoreDescription["kind"], UserStore["kind"]> = {
  managed: "USER_STORE_KIND_MANAGED",
  k3: "USER_STORE_KIND_K3",
  postgres: "USER_STORE_KIND_POSTGRES",
};

/** A pool as the admin API shows it: documents as JSON strings, the store without credentials, the live migration. */
export function poolView(deps: AdminDeps, organization: string, record: PoolRecord): Pool {
  const issuer = poolIssuer(deps.identityUrl(), organization, record);
  return {
    id: record.id,
    organization,
    name: record.name,
    displayName: record.displayName || record.name,
    issuer: issuer.issuer,
    jwksUri: `${issuer.issuer}/.well-known/jwks.json`,
    audience: issuer.audience,
    state: record.state,
    policiesJson: JSON.stringify(record.policies),
    settingsJson: JSON.stringify(record.settings),
    brandingJson: JSON.stringify(record.branding),
    roleCatalogJson: JSON.stringify(record.roleCatalog),
    userStore: userStoreView(record.userStore),
    ...(record.migration ? { migration: migrationView(record.migration) } : {}),
    createdAt: isoTime(record.createdAt),
  };
}

export function userStoreView(store: UserStoreDescription): UserStore {
  return {
    kind: kinds[store.kind] ?? "USER_STORE_KIND_MANAGED",
    ...(store.bucket ? { bucket: store.bucket } : {}),
    ...(store.host ? { host: store.host } : {}),
    ...(store.serviceAccount ? { serviceAccount: store.serviceAccount } : {}),
  };
}

function migrationView(migration: PoolMigration): Migration {
  return {
    phase: migration.phase,
    usersTotal: migration.usersTotal,
    usersCopied: migration.usersCopied,
    target: userStoreView(migration.target),
    keepSource: migration.keepSource,
    startedAt: isoTime(migration.startedAt),
    updatedAt: isoTime(migration.updatedAt),
    ...(migration.error !== undefined ? { error: migration.error } : {}),
  };
}

export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
