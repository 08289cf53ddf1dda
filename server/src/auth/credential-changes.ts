import { sql, type SQL } from "drizzle-orm";
import type { Database, DatabaseHandle } from "../db/database.js";
import type { CredentialCache, CredentialChange } from "./credential-cache.js";

/** The channel every server process listens on for credential changes. */
export const credentialChannel = "platform_credentials";

/** Anything that runs a statement: the database or a transaction of it. */
interface Executor {
  execute(query: SQL): PromiseLike<unknown>;
}

export function encodeCredentialChange(change: CredentialChange): string {
  return "all" in change ? "all" : `key:${change.keyId}`;
}

/** A payload this code does not understand decodes as "everything changed", the safe reading. */
export function decodeCredentialChange(payload: string): CredentialChange {
  return payload.startsWith("key:") && payload.length > 4 ? { keyId: payload.slice(4) } : { all: true };
}

/**
 * Tells every process on the database that a credential changed. Sent inside the transaction
 * that makes the change, NOTIFY is delivered when it commits and not at all when it rolls back,
 * so a listener never hears of a change before it can read it, nor of one that did not happen.
 * Every writer of keys and grants sends it, the admin commands included, whichever process
 * they run in. On the embedded database the one process hears it on commit.
 */
export async function announceCredentialChange(executor: Executor, change: CredentialChange): Promise<void> {
  await executor.execute(sql`select pg_notify(${credentialChannel}, ${encodeCredentialChange(change)})`);
}

/** The caches following each database in this process, for `credentialChangeCommitted`. */
const followers = new WeakMap<Database, Set<CredentialCache>>();

/**
 * Applies a committed change to this process's caches on `db` at once. The NOTIFY reaches them
 * too, but on PostgreSQL through the listening connection, a moment after the commit: called by
 * the writer once its transaction has committed, this makes the writer's own next call (and the
 * answer it is about to send) see the change already.
 */
export function credentialChangeCommitted(db: Database, change: CredentialChange): void {
  for (const cache of followers.get(db) ?? []) cache.apply(change);
}

/**
 * Keeps `cache` in step with every process's changes: each notice drops what it names, and each
 * time LISTEN is (re)established everything is dropped, since notices sent while the listening
 * connection was down are lost. Returns the function that stops listening.
 */
export async function followCredentialChanges(
  handle: Pick<DatabaseHandle, "db" | "listen">,
  cache: CredentialCache,
): Promise<() => Promise<void>> {
  const unlisten = await handle.listen(
    credentialChannel,
    (payload) => cache.apply(decodeCredentialChange(payload)),
    () => cache.flush(),
  );
  let caches = followers.get(handle.db);
  if (!caches) followers.set(handle.db, (caches = new Set()));
  caches.add(cache);
  return async () => {
    caches.delete(cache);
    await unlisten();
  };
}
