import type { CheckLogSignals } from "./check-log-signals.js";
import type { CheckStore, LogChunk } from "./check-store.js";

export interface FollowCheckLogOptions {
  readonly store: CheckStore;
  readonly signals: CheckLogSignals;
  readonly orgId: string;
  readonly repoId: string;
  readonly checkId: string;
  /** The offset of the last chunk the reader has (its `Last-Event-ID`), or -1 for the whole log. */
  readonly afterOffset: number;
  /** Ends the tail when the reader goes away. */
  readonly abort: AbortSignal;
  /** The fallback poll when no signal arrives (a signal lost between processes). */
  readonly pollMs?: number;
}

/**
 * The live tail of a check's log: every chunk after `afterOffset` in order, then each new one as
 * it is appended, ending once the check completed and its log is read to the end. The chunk
 * offset is the event id, so a reconnecting reader resumes exactly after what it saw.
 */
export async function* followCheckLog(options: FollowCheckLogOptions): AsyncGenerator<LogChunk> {
  const { store, signals, orgId, repoId, checkId, abort } = options;
  let after = options.afterOffset;
  let wake: (() => void) | undefined;
  let signalled = false;
  const unsubscribe = signals.onChanged(checkId, () => {
    signalled = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  abort.addEventListener("abort", onAbort);
  try {
    while (!abort.aborted) {
      signalled = false;
      // Read the state before the chunks: a check seen completed here has all its log written.
      const check = await store.get(orgId, repoId, checkId);
      if (!check) return;
      const chunks = await store.readLog(checkId, after);
      for (const chunk of chunks) {
        if (abort.aborted) return;
        yield chunk;
        after = chunk.offset;
      }
      if (check.status === "completed" && chunks.length === 0) return;
      if (chunks.length > 0 || signalled) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs ?? 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    abort.removeEventListener("abort", onAbort);
  }
}
