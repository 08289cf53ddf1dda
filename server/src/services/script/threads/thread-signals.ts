import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import type { DatabaseHandle } from "../../../db/database.js";

/** The one channel every server process listens on; payloads say what changed. */
const CHANNEL = "platform_threads";

/**
 * Wake-ups between the parts of the engine: "a thread has work" for workers, "a thread wrote
 * events" for its watchers. Within a process they travel through an EventEmitter; across
 * server processes on one PostgreSQL through LISTEN/NOTIFY (sent after the commit, so a woken
 * reader sees the rows). A missed signal costs latency only: workers also poll.
 */
export interface ThreadSignals {
  runnable(): Promise<void>;
  onRunnable(listener: () => void): () => void;
  eventsWritten(threadId: string): Promise<void>;
  onEvents(threadId: string, listener: () => void): () => void;
  close(): Promise<void>;
}

export async function createThreadSignals(handle: DatabaseHandle): Promise<ThreadSignals> {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const deliver = (payload: string) => {
    if (payload === "runnable") local.emit("runnable");
    else if (payload.startsWith("events:")) local.emit(payload);
  };
  // The embedded database lives in this process: the EventEmitter is the whole story there.
  const remote = handle.kind === "postgres";
  const unlisten = remote ? await handle.listen(CHANNEL, deliver) : undefined;
  const send = async (payload: string) => {
    if (remote) await handle.db.execute(sql`select pg_notify(${CHANNEL}, ${payload})`);
    else deliver(payload);
  };
  const subscribe = (event: string, listener: () => void) => {
    local.on(event, listener);
    return () => void local.off(event, listener);
  };
  return {
    runnable: () => send("runnable"),
    onRunnable: (listener) => subscribe("runnable", listener),
    eventsWritten: (threadId) => send(`events:${threadId}`),
    onEvents: (threadId, listener) => subscribe(`events:${threadId}`, listener),
    async close() {
      await unlisten?.();
      local.removeAllListeners();
    },
  };
}
