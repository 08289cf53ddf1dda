import { sql, type SQL } from "drizzle-orm";
import type { Database, DatabaseHandle } from "./database.js";

/** Anything that runs a statement: the database or a transaction of it. */
interface Executor {
  execute(query: SQL): PromiseLike<unknown>;
}

/** How a change travels as a NOTIFY payload. A payload `decode` does not understand must mean "everything changed". */
export interface ChangeCodec<C> {
  encode(change: C): string;
  decode(payload: string): C;
}

/** What follows the changes: told each change, and told to forget everything when notices may have been missed. */
export interface ChangeFollower<C> {
  apply(change: C): void;
  flush(): void;
}

export interface ChangeNotices<C> {
  /**
   * Tells every process on the database of a change. Sent inside the transaction that makes the
   * change, NOTIFY is delivered when it commits and not at all when it rolls back, so a follower
   * never hears of a change before it can read it, nor of one that did not happen. On the
   * embedded database the one process hears it on commit.
   */
  announce(executor: Executor, change: C): Promise<void>;
  /**
   * Applies a committed change to this process's followers on `db` at once. The NOTIFY reaches
   * them too, but on PostgreSQL through the listening connection, a moment after the commit:
   * called by the writer once its transaction has committed, this makes the writer's own next
   * call (and the answer it is about to send) see the change already.
   */
  committed(db: Database, change: C): void;
  /**
   * Keeps `follower` in step with every process's changes: each notice is applied, and each
   * time LISTEN is (re)established everything is flushed, since notices sent while the listening
   * connection was down are lost. Returns the function that stops following.
   */
  follow(handle: Pick<DatabaseHandle, "db" | "listen">, follower: ChangeFollower<C>): Promise<() => Promise<void>>;
}

/** Change notices on one channel, which every server process on the database listens on. */
export function createChangeNotices<C>(channel: string, codec: ChangeCodec<C>): ChangeNotices<C> {
  // The followers of each database in this process, for `committed`.
  const followers = new WeakMap<Database, Set<ChangeFollower<C>>>();
  return {
    async announce(executor, change) {
      await executor.execute(sql`select pg_notify(${channel}, ${codec.encode(change)})`);
    },
    committed(db, change) {
      for (const follower of followers.get(db) ?? []) follower.apply(change);
    },
    async follow(handle, follower) {
      const unlisten = await handle.listen(
        channel,
        (payload) => follower.apply(codec.decode(payload)),
        () => follower.flush(),
      );
      let following = followers.get(handle.db);
      if (!following) followers.set(handle.db, (following = new Set()));
      following.add(follower);
      return async () => {
        following.delete(follower);
        await unlisten();
      };
    },
  };
}
