import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import type { DatabaseHandle } from "../../../../db/database.js";

/** The channel every server process listens on for check log wake-ups. */
const CHANNEL = "platform_git_checks";

/**
 * "A check's log grew or the check changed", for live tails. In the embedded database the
 * EventEmitter is the whole story; on PostgreSQL the signal crosses processes through
 * LISTEN/NOTIFY, sent after the write committed so a woken reader sees the rows. A missed
 * signal costs latency only: tails also poll.
 */
export interface CheckLogSignals {
  changed(checkId: string): Promise<void>;
  onChanged(checkId: string, listener: () => void): () => void;
  close(): Promise<void>;
}

export async function createCheckLogSignals(handle: DatabaseHandle): Promise<CheckLogSignals> {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const deliver = (payload: string) => void local.emit(payload);
  const remote = handle.kind === "postgres";
  const unlisten = remote ? await handle.listen(CHANNEL, deliver) : undefined;
  return {
    async changed(checkId) {
      if (remote) await handle.db.execute(sql`select pg_notify(${CHANNEL}, ${checkId})`);
      else deliver(checkId);
    },
    onChanged(checkId, listener) {
      local.on(checkId, listener);
      return () => void local.off(checkId, listener);
    },
    async close() {
      await unlisten?.();
      local.removeAllListeners();
    },
  };
}
