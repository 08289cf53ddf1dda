import type { User } from "../../../../../gen/openapi/identity-issuer/types.js";
import type { AppUserRecord } from "../user-store.js";

/** A user as the issuer shows it to that user: no administrative flags. */
export function issuerUserOf(record: AppUserRecord): User {
  return {
    id: record.id,
    email: record.email,
    email_verified: record.emailVerified,
    app_roles: [...record.appRoles],
    created_at: new Date(record.createdAt).toISOString(),
  };
}
