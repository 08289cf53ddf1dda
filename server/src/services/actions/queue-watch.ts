import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import type { ActionRunManifest } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { ActionQueueStore, QueueRow } from "./action-queue-store.js";
import type { RunEventHub } from "./queue-event-hub.js";
import { hasEnded, isTerminal, startedEvent, terminalEvent } from "./queue-manifest-events.js";
import type { QueueCatalog, QueueManifests, QueueThreads, ThreadYield } from "./queue-ports.js";

export interface RunWatchOptions {
  readonly store: ActionQueueStore;
  readonly hub: RunEventHub;
  readonly manifests: QueueManifests;
  readonly threads: QueueThreads;
  readonly catalog: QueueCatalog;
  /** How often a watch looks at the queue row (or manifest) of a run executing in another process. */
  readonly pollMs?: number;
}

/** How long a replay waits for the next value of an ended run's thread before it gives up on the rest. */
const ENDED_THREAD_IDLE_MS = 2_000;

/** What a watch has sent so far: the database path skips what the in-process path already sent. */
interface Sent {
  started: boolean;
  progress: number;
}

/**
 * WatchActionRun's event stream of one run, in the caller's organization and the named bucket:
 * - a run a worker of this process executes: the runner's own events, as they happen (queue-event-hub.ts);
 * - a run queued, or executing in another process: `started` once its row records the thread, the
 *   thread's yields as `progress` (async actions) through the script service's watch, then the
 *   terminal event from the manifest once the row is done;
 * - a run that ended: replayed from its manifest, `started`, the thread's yields as `progress`
 *   (async actions, while the script service keeps the thread), then `completed` or `failed`.
 * A run the queue never held (RunAction) is found by its manifest. Closing the stream leaves the run alone.
 */
export function createRunWatch(options: RunWatchOptions) {
  const { store, hub, manifests, threads, catalog } = options;
  const pollMs = options.pollMs ?? 250;

  /**
   * A wait of `ms` that ends early when the run begins executing in this process or the watch is
   * closed. It listens from the moment it is made, so a run that begins while the caller is still
   * looking at the queue row ends the wait at once instead of being missed.
   */
  function pause(runId: string, signal: AbortSignal, ms = pollMs): { ended: Promise<void>; cancel(): void } {
    let done = () => {};
    const ended = new Promise<void>((resolve) => {
      done = () => {
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener("abort", done);
        resolve();
      };
    });
    const timer = setTimeout(done, ms);
    const unsubscribe = hub.onBegin((id) => id === runId && done());
    signal.addEventListener("abort", done);
    return { ended, cancel: done };
  }

  const sendsProgress = (actionId: string) => catalog.get(actionId)?.invoke === "async";

  /**
   * The thread's yields as progress events, after the `sent.progress` already sent. `idleMs` bounds
   * the wait for the next one, for a run whose manifest says it ended: its thread has ended too
   * and its watch replays and ends at once, unless something went wrong, which must not hold the
   * stream open.
   */
  async function* progressOf(orgId: string, threadId: string, sent: Sent, signal: AbortSignal, idleMs?: number) {
    let position = 0;
    const follow = new AbortController();
    const stop = () => follow.abort();
    signal.addEventListener("abort", stop);
    const values = threads.yields(orgId, threadId, follow.signal)[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<ThreadYield> | "idle";
        let timer: NodeJS.Timeout | undefined;
        try {
          next = await Promise.race([
            values.next(),
            ...(idleMs === undefined
              ? []
              : [new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), idleMs)))]),
          ]);
        } catch {
          // The thread is gone (deleted with its organization's threads), and the run's progress with it.
          return;
        } finally {
          clearTimeout(timer);
        }
        if (next === "idle" || next.done) return;
        if (position++ < sent.progress) continue;
        sent.progress++;
        yield create(ActionEventSchema, { event: { case: "progress", value: next.value } });
      }
    } finally {
      signal.removeEventListener("abort", stop);
      follow.abort();
      void values.return?.()?.catch(() => {});
    }
  }

  /** The rest of a run from its manifest, following the manifest while it still says RUNNING. */
  async function* fromManifest(
    orgId: string,
    bucket: string,
    first: ActionRunManifest,
    sent: Sent,
    signal: AbortSignal,
  ): AsyncGenerator<ActionEvent> {
    let manifest = first;
    if (!sent.started) {
      sent.started = true;
      yield startedEvent(manifest.actionId, manifest.threadId, manifest.runId, Number(manifest.startedAtMs));
    }
    // An ended run's progress is in its thread, not its manifest: replayed from there while the thread is kept.
    if (manifest.threadId !== "" && sendsProgress(manifest.actionId))
      yield* progressOf(orgId, manifest.threadId, sent, signal, hasEnded(manifest) ? ENDED_THREAD_IDLE_MS : undefined);
    while (!hasEnded(manifest)) {
      await pause(manifest.runId, signal, pollMs * 4).ended;
      if (signal.aborted) return;
      manifest = (await manifests.read(orgId, bucket, manifest.reverseTs, manifest.runId)) ?? manifest;
    }
    yield terminalEvent(manifest);
  }

  async function* fromQueue(row: QueueRow, sent: Sent, signal: AbortSignal): AsyncGenerator<ActionEvent> {
    const { orgId, bucket, runId } = row;
    let followed = "";
    while (!signal.aborted) {
      const wait = pause(runId, signal);
      try {
        const live = hub.follow(runId, signal);
        if (live) {
          let position = 0;
          for await (const event of live) {
            if (event.event.case === "started") {
              if (sent.started) continue;
              sent.started = true;
            } else if (event.event.case === "progress") {
              if (position++ < sent.progress) continue;
              sent.progress++;
            }
            yield event;
            if (isTerminal(event)) return;
          }
          continue;
        }
        const current = await store.get(orgId, runId);
        if (!current || current.status === "done") {
          const manifest = await manifests.read(orgId, bucket, row.reverseTs, runId);
          if (manifest) return yield* fromManifest(orgId, bucket, manifest, sent, signal);
          yield create(ActionEventSchema, {
            event: { case: "failed", value: { error: "the run ended without a record of how" } },
          });
          return;
        }
        if (current.status === "running" && current.threadId !== "" && current.threadId !== followed) {
          followed = current.threadId;
          if (!sent.started) {
            sent.started = true;
            yield startedEvent(current.actionId, current.threadId, runId, current.startedAt);
          }
          if (sendsProgress(current.actionId)) yield* progressOf(orgId, current.threadId, sent, signal);
          continue;
        }
        await wait.ended;
      } finally {
        wait.cancel();
      }
    }
  }

  return async function* watch(
    orgId: string,
    bucket: string,
    runId: string,
    signal: AbortSignal,
  ): AsyncGenerator<ActionEvent> {
    const sent: Sent = { started: false, progress: 0 };
    const row = await store.get(orgId, runId);
    if (row && row.bucket === bucket) return yield* fromQueue(row, sent, signal);
    const manifest = await manifests.find(orgId, bucket, runId);
    if (!manifest) throw new ConnectError(`run ${runId} not found in bucket ${bucket}`, Code.NotFound);
    yield* fromManifest(orgId, bucket, manifest, sent, signal);
  };
}

export type RunWatch = ReturnType<typeof createRunWatch>;
