import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";

/** How long a run that ended here stays followable, and how many such runs are kept at most. */
const KEEP_ENDED_MS = 60_000;
const MAX_ENDED_KEPT = 1000;

/** Events of one run kept for watchers that arrive late: `started` and the end always, progress up to this many. */
const MAX_KEPT_PROGRESS = 1000;

interface LiveRun {
  readonly events: ActionEvent[];
  progress: number;
  ended: boolean;
  readonly waiters: Set<() => void>;
}

/**
 * The events of the runs this process's workers execute, handed to this process's watchers as
 * they happen. A watcher of a run executing elsewhere follows the database instead
 * (queue-watch.ts); this only spares the local case the polling and gives it the runner's exact
 * events.
 */
export function createRunEventHub() {
  const live = new Map<string, LiveRun>();
  /** Runs that ended here with their terminal event, for a watcher that arrives just after: oldest first. */
  const ended = new Map<string, LiveRun>();
  const beginListeners = new Set<(runId: string) => void>();

  function wake(run: LiveRun): void {
    for (const waiter of run.waiters) waiter();
    run.waiters.clear();
  }

  return {
    /** A worker of this process starts executing the run. */
    begin(runId: string): void {
      ended.delete(runId);
      live.set(runId, { events: [], progress: 0, ended: false, waiters: new Set() });
      for (const listener of beginListeners) listener(runId);
    },

    publish(runId: string, event: ActionEvent): void {
      const run = live.get(runId);
      if (!run) return;
      if (event.event.case !== "progress") run.events.push(event);
      else if (run.progress++ < MAX_KEPT_PROGRESS) run.events.push(event);
      wake(run);
    },

    /** The worker stopped executing the run: it ended, or this process let it go (its watchers then follow the database). */
    end(runId: string): void {
      const run = live.get(runId);
      if (!run) return;
      live.delete(runId);
      run.ended = true;
      wake(run);
      const last = run.events.at(-1)?.event.case;
      if (last !== "completed" && last !== "failed") return;
      ended.set(runId, run);
      if (ended.size > MAX_ENDED_KEPT) ended.delete(ended.keys().next().value!);
      setTimeout(() => ended.get(runId) === run && ended.delete(runId), KEEP_ENDED_MS).unref();
    },

    /** Calls `listener` each time a run begins here; returns the unsubscribe function. */
    onBegin(listener: (runId: string) => void): () => void {
      beginListeners.add(listener);
      return () => beginListeners.delete(listener);
    },

    /**
     * The run's events so far and as they come, until it ends here; undefined when no worker of this
     * process executes it (nor ended it within the last minute).
     */
    follow(runId: string, signal: AbortSignal): AsyncIterable<ActionEvent> | undefined {
      const run = live.get(runId) ?? ended.get(runId);
      if (!run) return undefined;
      return (async function* () {
        let next = 0;
        while (!signal.aborted) {
          while (next < run.events.length) yield run.events[next++]!;
          if (run.ended) return;
          await new Promise<void>((resolve) => {
            const done = () => {
              signal.removeEventListener("abort", done);
              resolve();
            };
            run.waiters.add(done);
            signal.addEventListener("abort", done);
          });
        }
      })();
    },
  };
}

export type RunEventHub = ReturnType<typeof createRunEventHub>;
