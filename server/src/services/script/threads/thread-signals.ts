import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import type { DatabaseHandle } from "../../../db/database.js";

/** The one channel every server process listens on; payloads say what changed. */
const CHANNEL = "platform_threads";

/**
 * Wake-ups between the parts of the engine: "a thread has work" for workers, "a thread wrote
 * events" for its watchers, "stop this thread" for the worker running it, "callbacks are due"
 * for deliverers. Within a process they travel through an EventEmitter; across
 * server processes on one PostgreSQL through LISTEN/NOTIFY (sent after the commit, so a woken
 * reader sees the rows). A missed signal costs latency only: workers also poll.
 */
export interface ThreadSignals {
  runnable(): Promise<void>;
  onRunnable(listener: () => void): () => void;
  eventsWritten(threadId: string): Promise<void>;
  onEvents(threadId: string, listener: () => void): () => void;
  /** A cancel was asked for a thread a worker may be running: its running steps stop now. */
  cancelRequested(threadId: string): Promise<void>;
  onCancelRequested(threadId: string, listener: () => void): () => void;
  /** Callback deliveries were queued (a thread with a callback_url ended). */
  callbacksDue(): Promise<void>;
  onCallbacksDue(listener: () => void): () => void;
  close(): Promise<void>;
}

export async function createThreadSignals(handle: DatabaseHandle): Promise<ThreadSignals> {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const deliver = (payload: string) => {
    if (payload === "runnable" || payload === "callbacks") local.emit(payload);
    else if (payload.startsWith("events:") || payload.startsWith("cancel:")) local.emit(payload);
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
    cancelRequested: (threadId) => send(`cancel:${threadId}`),
    onCancelRequested: (threadId, listener) => subscribe(`cancel:${threadId}`, listener),
    callbacksDue: () => send("callbacks"),
    onCallbacksDue: (listener) => subscribe("callbacks", listener),
    async close() {
      await unlisten?.();
      local.removeAllListeners();
    },
  };
}
