import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import { startPollLoop, type PollLoop } from "../../background/poll-loop.js";
import type { ActionDispatch, ActionRunner } from "./action-runner.js";
import type { ActionQueueStore, QueueRow } from "./action-queue-store.js";
import { dispatchOf } from "./queue-dispatch.js";
import type { RunEventHub } from "./queue-event-hub.js";
import type { QueueCatalog } from "./queue-ports.js";

/** Runs executing at once in one process, across organizations. */
export const DEFAULT_ACTION_CONCURRENCY = 8;
/** Runs of one organization executing at once across every process on the database. */
export const DEFAULT_ACTION_ORG_CONCURRENCY = 4;
/** Claims of one run before it is failed rather than started again (its workers kept dying). */
const MAX_ATTEMPTS = 5;
/** How long an ended row stays (a watch finds the run's manifest through it). */
const DONE_RETENTION_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60_000;

export interface ActionQueueWorkerOptions {
  readonly store: ActionQueueStore;
  readonly runner: ActionRunner;
  readonly catalog: QueueCatalog;
  /** Where this process's watchers get the events of the runs executing here. */
  readonly hub: RunEventHub;
  readonly concurrency?: number;
  readonly perOrganization?: number;
  /** How long a claim holds without renewal: how soon a dead process's runs are taken over. */
  readonly leaseMs?: number;
  /** The safety-net poll for work enqueued by other processes. */
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export interface ActionQueueWorker {
  start(): void;
  /** Looks for work at once (a dispatch was enqueued in this process). */
  wake(): void;
  /** Stops claiming, ends the runs in progress here and gives their leases back, so any process resumes them at once. */
  stop(): Promise<void>;
}

/** Why a run stopped executing here without ending: another worker has it, or the process is stopping. */
class LetGo extends Error {}

/**
 * The action queue's worker: any process sharing the database runs one. It claims queued runs
 * (bounded per organization, fair across them: action-queue-store.ts) up to its own concurrency,
 * executes each with the runner while renewing the lease, records the run's thread as soon as it
 * exists, and marks the row done when the runner ends. A run whose process died is claimed again
 * after its lease lapses and executed with its thread id, so the thread resumes and the run ends
 * once. A runner that throws (a dispatch-time error) has the run recorded as FAILED.
 */
export function createActionQueueWorker(options: ActionQueueWorkerOptions): ActionQueueWorker {
  const { store, runner, catalog, hub } = options;
  const owner = `actions-${randomUUID()}`;
  const concurrency = options.concurrency ?? DEFAULT_ACTION_CONCURRENCY;
  const perOrganization = options.perOrganization ?? DEFAULT_ACTION_ORG_CONCURRENCY;
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 1_000;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let stopped = true;
  let loop: PollLoop | undefined;
  let purgedAt = 0;

  async function claimPass(): Promise<boolean> {
    if (now() - purgedAt > PURGE_EVERY_MS) {
      purgedAt = now();
      await store.purgeDone(now() - DONE_RETENTION_MS);
    }
    while (!stopped && running.size < concurrency) {
      const row = await store.claim(owner, leaseMs, perOrganization, now());
      if (!row) return false;
      // A run of ours that stalled past its lease is stale now: end it before the new one.
      running.get(row.runId)?.abort.abort(new LetGo("lease expired"));
      const abort = new AbortController();
      running.set(row.runId, { abort, done: execute(row, abort) });
    }
    return false;
  }

  async function execute(row: QueueRow, abort: AbortController): Promise<void> {
    const { runId } = row;
    hub.begin(runId);
    const renewal = setInterval(
      () => {
        store.renew(runId, owner, leaseMs, now()).then(
          (held) => held || abort.abort(new LetGo("lease lost")),
          () => {},
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    let dispatch: ActionDispatch | undefined;
    try {
      dispatch = dispatchOf(row);
      const action = catalog.get(row.actionId);
      if (!action) return await failed(dispatch, `action ${row.actionId} is no longer offered`);
      if (row.attempts > MAX_ATTEMPTS)
        return await failed(dispatch, `the run was interrupted ${row.attempts - 1} times and is not started again`);
      const events = runner.execute(
        { action, dispatch },
        {
          signal: abort.signal,
          ...(row.threadId ? { threadId: row.threadId } : {}),
          onThread: async (threadId) => {
            if (await store.setThread(runId, owner, threadId)) return;
            // Another worker holds the run now: the runner stops on the signal, writing nothing more.
            const lost = new LetGo("lease lost");
            abort.abort(lost);
            throw lost;
          },
        },
      );
      for await (const event of until(events, abort.signal)) hub.publish(runId, event);
      if (abort.signal.aborted) return;
      await store.finish(runId, owner, now());
    } catch (error) {
      if (abort.signal.aborted || error instanceof LetGo) return;
      log("an action run failed at dispatch", { runId, error: error instanceof Error ? error.message : String(error) });
      if (dispatch) await failed(dispatch, dispatchError(error));
    } finally {
      clearInterval(renewal);
      hub.end(runId);
      if (running.get(runId)?.abort === abort) running.delete(runId);
      if (stopped) await store.release(runId, owner).catch(() => {});
      else loop?.wake();
    }
  }

  /** Records a run that cannot execute as FAILED and ends its row; left to a later claim if even that fails. */
  async function failed(dispatch: ActionDispatch, message: string): Promise<void> {
    try {
      await runner.failDispatch(dispatch, message);
      hub.publish(dispatch.runId, create(ActionEventSchema, { event: { case: "failed", value: { error: message } } }));
      await store.finish(dispatch.runId, owner, now());
    } catch (error) {
      log("recording an action run's failure failed", {
        runId: dispatch.runId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop = startPollLoop(claimPass, {
        pollMs,
        onError: (error) =>
          log("claiming action runs failed", { error: error instanceof Error ? error.message : String(error) }),
      });
    },
    wake() {
      loop?.wake();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await loop?.stop();
      for (const { abort } of running.values()) abort.abort(new LetGo("server stopping"));
      await Promise.all([...running.values()].map((run) => run.done));
    },
  };
}

/**
 * What a dispatch-time failure tells the caller in the manifest: a deliberate API error's message;
 * anything else is described generically (it was logged in full) so no internal detail leaks.
 */
function dispatchError(error: unknown): string {
  if (error instanceof ConnectError) return error.rawMessage;
  return "the run could not be dispatched (internal error)";
}

/** The events of a run until the signal aborts, even while the runner waits for its next event. */
async function* until(events: AsyncIterable<ActionEvent>, signal: AbortSignal): AsyncIterable<ActionEvent> {
  const iterator = events[Symbol.asyncIterator]();
  const aborted = new Promise<"aborted">((resolve) => {
    if (signal.aborted) resolve("aborted");
    signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  try {
    for (;;) {
      const pending = iterator.next();
      // Left pending when the signal wins: the runner then ends with the abort as its error, which nobody awaits.
      pending.catch(() => {});
      const next = await Promise.race([pending, aborted]);
      if (next === "aborted" || next.done) return;
      yield next.value;
    }
  } finally {
    // Ends the runner's generator (its own cleanup runs); not awaited, since it may be mid-await.
    void iterator.return?.()?.catch(() => {});
  }
}
