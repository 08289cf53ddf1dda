import { createChangeNotices } from "../db/change-notices.js";
import type { CredentialChange } from "./credential-cache.js";

/** The channel every server process listens on for credential changes. */
export const credentialChannel = "platform_credentials";

export function encodeCredentialChange(change: CredentialChange): string {
  return "all" in change ? "all" : `key:${change.keyId}`;
}

/** A payload this code does not understand decodes as "everything changed", the safe reading. */
export function decodeCredentialChange(payload: string): CredentialChange {
  return payload.startsWith("key:") && payload.length > 4 ? { keyId: payload.slice(4) } : { all: true };
}

const notices = createChangeNotices(credentialChannel, {
  encode: encodeCredentialChange,
  decode: decodeCredentialChange,
});

/**
 * Tells every process on the database that a credential changed, inside the transaction that
 * changes it (see `ChangeNotices.announce`). Every writer of keys and grants sends it, the admin
 * commands included, whichever process they run in.
 */
export const announceCredentialChange = notices.announce;

/** Applies a committed credential change to this process's caches on `db` at once (see `ChangeNotices.committed`). */
export const credentialChangeCommitted = notices.committed;

/** Keeps a credential cache in step with every process's credential changes (see `ChangeNotices.follow`). */
export const followCredentialChanges = notices.follow;
