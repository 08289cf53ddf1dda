import { Code, ConnectError } from "@connectrpc/connect";
import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { principalOf } from "../../../auth/principal.js";
import type { Database } from "../../../db/database.js";
import type { ThreadStatus as ThreadStatusText } from "../script-schema.js";
import { enqueueThreadCallback } from "../callbacks/callback-outbox.js";
import { threadNotFound, type ThreadMethodsContext } from "./thread-access.js";
import { createThreadApiStore } from "./thread-api-store.js";
import { threadEvent } from "./thread-events.js";
import { threadStatusOf } from "./thread-messages.js";
import { invalid } from "./thread-requests.js";
import { createThreadStore, type ThreadHeader } from "./thread-store.js";

type LifecycleMethods = Pick<ScriptServiceImplementation, "cancelThread" | "resumeThread">;

/** Longest CancelThread `reason`, as the contract says. */
export const MAX_CANCEL_REASON_LENGTH = 1024;

/** What a status change decided, and whom to wake once it is committed. */
interface Transition {
  readonly status: ThreadStatus;
  readonly eventsWritten?: boolean;
  readonly runnable?: boolean;
  readonly callbackQueued?: boolean;
  readonly cancelRequested?: boolean;
}

/**
 * CancelThread and ResumeThread: the status transitions the API makes itself. Each runs in one
 * transaction on the thread row locked FOR UPDATE, so that it never interleaves with a worker's
 * claim; a thread a worker holds (a live lease) is left to the worker.
 */
export function createLifecycleMethods(context: ThreadMethodsContext): LifecycleMethods {
  const { db, signals, now } = context;

  /** Runs `change` on the locked thread, then sends the wake-ups it asks for. */
  async function transition(
    orgId: string,
    threadId: string,
    change: (row: ThreadHeader, tx: Database, at: number) => Promise<Transition>,
  ): Promise<ThreadStatus> {
    await context.requireThread(orgId, threadId);
    const done = await db.transaction(async (tx) => {
      const row = await createThreadApiStore(tx as unknown as Database).lockThread(orgId, threadId);
      if (!row) throw threadNotFound(threadId);
      return change(row, tx as unknown as Database, now());
    });
    if (done.eventsWritten) await wake(() => signals.eventsWritten(threadId));
    if (done.runnable) await wake(() => signals.runnable());
    if (done.callbackQueued) await wake(() => signals.callbacksDue());
    if (done.cancelRequested) await wake(() => signals.cancelRequested(threadId));
    return done.status;
  }

  return {
    async cancelThread(request, handlerContext) {
      const { orgId } = principalOf(handlerContext);
      if ([...request.reason].length > MAX_CANCEL_REASON_LENGTH)
        throw invalid(`reason is longer than ${MAX_CANCEL_REASON_LENGTH} characters`);
      const status = await transition(orgId, request.threadId, async (row, tx, at) => {
        const store = createThreadStore(tx);
        const leased = row.leaseOwner !== "" && row.leaseExpiresAt > at;
        if ((row.status === "pending" || row.status === "paused") && !leased) {
          // No worker has it: the API finishes the cancel itself (thread, unfinished steps, event).
          await store.updateIfStatus(orgId, row.id, [row.status], {
            status: "cancelled",
            cancelRequested: true,
            cancelReason: request.reason,
            finishedAt: at,
          });
          await createThreadApiStore(tx).cancelUnfinishedSteps(orgId, row.id, at);
          const cancelledStepPath = row.status === "paused" ? row.currentStepPath : "";
          await store.appendEvent(orgId, row.id, threadEvent.cancelled(request.reason, cancelledStepPath));
          return {
            status: ThreadStatus.CANCELLED,
            eventsWritten: true,
            callbackQueued: await enqueueThreadCallback(tx, row.id),
          };
        }
        if (row.status === "running" || row.status === "pending" || row.status === "paused") {
          // A worker runs it (or will: a lease ran out, a wait is pending). The signal aborts its
          // running steps (its lease renewal notices too, should the signal be lost); it then
          // writes CANCELLED with the `cancelled` event. run_after 0 lets a thread asleep in a
          // wait step be claimed for that at once.
          await store.updateIfStatus(orgId, row.id, [row.status], {
            status: "cancelling",
            cancelRequested: true,
            cancelReason: request.reason,
            runAfter: 0,
          });
          return { status: ThreadStatus.CANCELLING, runnable: true, cancelRequested: true };
        }
        // Repeat calls answer the status again (Temporal's RequestCancelWorkflowExecution).
        if (row.status === "cancelling" || row.status === "cancelled") return { status: threadStatusOf(row.status) };
        throw new ConnectError(
          `thread ${row.id} is ${statusName(row.status)}: a finished thread cannot be cancelled`,
          Code.FailedPrecondition,
        );
      });
      return { status };
    },

    async resumeThread(request, handlerContext) {
      const { orgId } = principalOf(handlerContext);
      const override = parseOverride(request.stepInputOverrideJson);
      const status = await transition(orgId, request.threadId, async (row, tx, at) => {
        if (row.status !== "failed" && row.status !== "paused") {
          throw new ConnectError(
            `thread ${row.id} is ${statusName(row.status)}: only a PAUSED or FAILED thread can be resumed`,
            Code.FailedPrecondition,
          );
        }
        if (row.leaseOwner !== "" && row.leaseExpiresAt > at) {
          throw new ConnectError(
            `thread ${row.id} is being run right now (its approval timed out); read its status and try again`,
            Code.Aborted,
          );
        }
        // A deadline that has passed (the thread failed on it, or is past it) starts again with
        // the same length from the resume, as the contract says; one still ahead is kept.
        const deadlineAt =
          row.timeoutMs > 0 && row.deadlineAt > 0 && row.deadlineAt <= at ? at + row.timeoutMs : row.deadlineAt;
        const updated = await createThreadStore(tx).updateIfStatus(orgId, row.id, [row.status], {
          status: "pending",
          error: "",
          finishedAt: 0,
          runAfter: 0,
          deadlineAt,
          resumeOverride: override,
          resumeCount: row.resumeCount + 1,
        });
        return { status: threadStatusOf(updated?.status ?? row.status), runnable: true };
      });
      return { status };
    },
  };
}

/**
 * `step_input_override_json`: "" keeps the recorded input (no override); otherwise any JSON value
 * but `null`, which the jsonb column could not tell apart from "no override".
 */
function parseOverride(text: string): unknown {
  if (text.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalid(`step_input_override_json: is not valid JSON (${reason})`);
  }
  if (value === null)
    throw invalid(
      "step_input_override_json: null cannot replace a step input; leave the field empty to keep the recorded input",
    );
  return value;
}

/** `THREAD_STATUS_COMPLETED`: the status as the contract spells it, for messages. */
export function statusName(status: ThreadStatusText): string {
  return `THREAD_STATUS_${status.toUpperCase()}`;
}

/**
 * Sends a wake-up. The state change is committed; a lost signal costs latency only (workers
 * and watchers also poll), so it must not turn a done change into an error for the caller.
 */
export async function wake(send: () => Promise<void>): Promise<void> {
  try {
    await send();
  } catch {
    // Nothing to undo: see above.
  }
}
