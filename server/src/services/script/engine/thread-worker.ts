import { RecentMap } from "../../../cache/recent-map.js";
import { randomUUID } from "node:crypto";
import { startPollLoop, type PollLoop } from "../../../background/poll-loop.js";
import { parsePublishedScript } from "../dsl/parse-script.js";
import type { JsonValue, ScriptDocument } from "../dsl/script-document.js";
import { openThreadEnv } from "../env-sealing.js";
import type { ScriptStore } from "../script-store.js";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { ArtifactStore } from "../threads/artifact-store.js";
import { threadEvent, type ThreadEventRecord } from "../threads/thread-events.js";
import type { ThreadSignals } from "../threads/thread-signals.js";
import type { ThreadRow, ThreadStore } from "../threads/thread-store.js";
import { runThread } from "./interpreter.js";
import { failureLogFields } from "./failure-text.js";
import { shareEventLoop } from "./loop-share.js";
import { outputWarnings } from "./output-warnings.js";
import { Cancellation, LeaseLost, StepFailure, Suspension } from "./run-outcome.js";
import type { ThreadLimits } from "./thread-budget.js";

/** The longest delay setTimeout keeps (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ThreadWorkerOptions {
  readonly store: ThreadStore;
  readonly scripts: ScriptStore;
  readonly signals: ThreadSignals;
  readonly tools: ToolRegistry;
  /** Where artifact.write steps put the thread's files. */
  readonly artifacts: Pick<ArtifactStore, "write">;
  /** Opens the environment each thread was created with (sealed at rest). */
  readonly box: SecretBox;
  /** Threads run at once by this process. */
  readonly concurrency?: number;
  /** How long a claim holds; renewed at a third of it while the thread runs. */
  readonly leaseMs?: number;
  /** Safety-net poll for runnable threads (waits ending, signals missed). */
  readonly pollMs?: number;
  /** What one run of a thread may hold and spend (memory, concurrent iterations, expressions). */
  readonly limits?: ThreadLimits;
  readonly now?: () => number;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export interface ThreadWorker {
  start(): void;
  /** Stops claiming, ends running threads and gives their leases back so another start resumes them at once. */
  stop(): Promise<void>;
}

/**
 * The engine's worker: claims runnable threads with FOR UPDATE SKIP LOCKED and a lease, runs each
 * with the interpreter while renewing the lease, and records how the run ended. A thread whose
 * process died is claimed again once its lease expires and continues after its last completed
 * step. Works the same on the embedded database and with many processes on one PostgreSQL.
 */
export function createThreadWorker(options: ThreadWorkerOptions): ThreadWorker {
  const { store, scripts, signals, tools, artifacts } = options;
  const owner = `worker-${randomUUID()}`;
  const concurrency = options.concurrency ?? 8;
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 1_000;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Wake-ups of this process's claim loop at the times threads it released become runnable. */
  const wakeTimers = new Set<NodeJS.Timeout>();
  const documents = new RecentMap<string, ScriptDocument>(256);
  let stopped = true;
  let loop: PollLoop | undefined;
  let unsubscribe: (() => void) | undefined;

  async function documentOf(thread: ThreadRow): Promise<ScriptDocument> {
    const key = `${thread.orgId}/${thread.scriptName}/${thread.scriptVersion}`;
    let document = documents.get(key);
    if (!document) {
      const version = await scripts.getVersion(thread.orgId, thread.scriptName, thread.scriptVersion);
      if (!version) throw new Error(`script ${thread.scriptName} version ${thread.scriptVersion} is gone`);
      document = parsePublishedScript(version.source);
      documents.set(key, document);
    }
    return document;
  }

  async function emit(thread: ThreadRow, event: ThreadEventRecord): Promise<void> {
    await store.appendEvent(thread.orgId, thread.id, event);
    notify(thread.id);
  }

  /** Wakes the thread's watchers; off the step's critical path, since a missed wake-up only delays them until their poll. */
  function notify(threadId: string): void {
    signals
      .eventsWritten(threadId)
      .catch((error: unknown) => log("notifying watchers failed", { threadId, error: String(error) }));
  }

  /** After a run ended: wakes the watchers, and the deliverers when the end queued a callback. */
  function ended(thread: ThreadRow): void {
    notify(thread.id);
    if (thread.callbackUrl !== "")
      signals
        .callbacksDue()
        .catch((error: unknown) =>
          log("waking callback delivery failed", { threadId: thread.id, error: String(error) }),
        );
  }

  async function run(thread: ThreadRow, abort: AbortController): Promise<void> {
    // A cancel stops the running steps at once rather than after they finish.
    const stopForCancel = () => {
      store.cancelRequested(thread.orgId, thread.id).then(
        ({ requested, reason, currentStepPath }) =>
          requested && !abort.signal.aborted && abort.abort(new Cancellation(reason, currentStepPath)),
        () => {},
      );
    };
    const unsubscribeCancel = signals.onCancelRequested(thread.id, stopForCancel);
    const renewal = setInterval(
      () => {
        store.renew(thread.id, owner, leaseMs, now()).then(
          (lease) =>
            lease === "lost" ? abort.abort(new LeaseLost("lease lost")) : lease === "cancel" && stopForCancel(),
          () => {},
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    const deadline =
      thread.deadlineAt > 0
        ? setTimeout(
            () =>
              abort.abort(
                new StepFailure(
                  `thread timed out after ${thread.timeoutMs} ms`,
                  thread.currentStepPath,
                  thread.currentStepName,
                ),
              ),
            Math.max(0, thread.deadlineAt - now()),
          )
        : undefined;
    const started = now();
    try {
      if (thread.eventSequence === 0) await emit(thread, threadEvent.started(thread.scriptName, thread.totalSteps));
      // A thread claimed while PAUSED was woken by an approval timeout; the interpreter needs to
      // know, then the thread runs as RUNNING.
      const document = await documentOf(thread);
      if (thread.status !== "paused") await store.update(thread.id, owner, { status: "running" });
      const env = openThreadEnv(options.box, { orgId: thread.orgId, threadId: thread.id }, thread.sealedEnv);
      const output = await runThread({ ...thread, env }, document, {
        store,
        tools,
        artifacts,
        signal: abort.signal,
        // Every database call of a run waits for its turn of the event loop (loop-share.ts).
        saveStep: async (step) => {
          await shareEventLoop();
          if (!(await store.saveStep(step, owner))) throw new LeaseLost("lease lost");
        },
        beginStep: async (step, event) => {
          await shareEventLoop();
          const outcome = await store.beginStep(owner, step, event);
          if (outcome === "started") notify(thread.id);
          return outcome;
        },
        finishStep: async (step, event) => {
          await shareEventLoop();
          const finished = await store.finishStep(owner, step, event);
          if (finished) notify(thread.id);
          return finished;
        },
        now,
        log,
        limits: options.limits,
        emit: async (event) => {
          await shareEventLoop();
          await emit(thread, event);
        },
      });
      await finish(thread, document, output, started);
    } catch (error) {
      await settle(thread, abort.signal.reason ?? error, error).catch((failure: unknown) => {
        // The thread keeps the lease until it expires; then a worker claims it and runs it again.
        log("recording how a run ended failed", { threadId: thread.id, ...failureLogFields(failure) });
      });
    } finally {
      clearInterval(renewal);
      unsubscribeCancel();
      clearTimeout(deadline);
      if (running.get(thread.id)?.abort === abort) running.delete(thread.id);
      if (!stopped) loop?.wake();
    }
  }

  async function finish(
    thread: ThreadRow,
    document: ScriptDocument,
    output: JsonValue,
    started: number,
  ): Promise<void> {
    const finished = now();
    const steps = await store.completedStepCount(thread.orgId, thread.id);
    // An output that does not match `outputs` completes the thread all the same, with warnings.
    const warnings = outputWarnings(document, output);
    const event = { ...threadEvent.completed(finished - (thread.startedAt || started), steps), at: finished };
    if (
      !(await store.endRun(
        thread.id,
        owner,
        {
          status: "completed",
          output: output as never,
          warnings,
          finishedAt: finished,
          error: "",
          resumeOverride: null,
        },
        event,
      ))
    )
      return;
    if (warnings.length > 0) log("thread completed with output warnings", { threadId: thread.id, warnings });
    ended(thread);
  }

  /** Records how a run that did not complete ended. */
  async function settle(thread: ThreadRow, reason: unknown, error: unknown): Promise<void> {
    if (reason instanceof LeaseLost || (stopped && !(error instanceof Suspension))) {
      // Someone else owns the thread now, or this process is stopping: leave it as it is.
      await store.release(thread.id, owner, {}).catch(() => {});
      return;
    }
    if (error instanceof Suspension) {
      await store.release(thread.id, owner, {
        status: error.reason === "approval" ? "paused" : "running",
        runAfter: error.runAfter,
        resumeOverride: null,
      });
      if (error.runAfter > 0) wakeAt(error.runAfter);
      return;
    }
    const cancellation = reason instanceof Cancellation ? reason : error instanceof Cancellation ? error : undefined;
    if (cancellation) {
      const at = now();
      const event = { ...threadEvent.cancelled(cancellation.reason, cancellation.stepPath), at };
      if (await store.endRun(thread.id, owner, { status: "cancelled", finishedAt: at }, event)) ended(thread);
      return;
    }
    // A step's failure was described (and logged) where it happened; another one is described here.
    const failure = reason instanceof StepFailure ? reason : error;
    const stepPath = failure instanceof StepFailure ? failure.stepPath : "";
    const stepName = failure instanceof StepFailure ? failure.stepName : "";
    const fields = failureLogFields(failure);
    const message = String(fields.error);
    log("thread failed", { threadId: thread.id, stepPath, ...fields });
    const at = now();
    const event = { ...threadEvent.failed(message, { stepPath, name: stepName }), at };
    if (
      await store.endRun(
        thread.id,
        owner,
        { status: "failed", error: message, failedStepPath: stepPath, finishedAt: at, resumeOverride: null },
        event,
      )
    )
      ended(thread);
  }

  /**
   * Claims again at `at`: a wait or a retry's backoff then resumes on time rather than at the next
   * poll. (Any process may claim the thread; the poll remains the safety net, also for waits
   * longer than a timer can hold, which wake the loop early and find nothing due.)
   */
  function wakeAt(at: number): void {
    const timer = setTimeout(
      () => {
        wakeTimers.delete(timer);
        if (!stopped) loop?.wake();
      },
      Math.min(Math.max(0, at - now()) + 1, MAX_TIMER_MS),
    );
    timer.unref();
    wakeTimers.add(timer);
  }

  /** Claims what this process has room for and starts running it. */
  async function claimPass(): Promise<void> {
    const free = concurrency - running.size;
    if (free <= 0) return;
    for (const thread of await store.claim(owner, leaseMs, free, now())) {
      // A run of ours that stalled past its lease is stale now: end it before the new one.
      running.get(thread.id)?.abort.abort(new LeaseLost("lease expired"));
      const abort = new AbortController();
      running.set(thread.id, { abort, done: run(thread, abort) });
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop = startPollLoop(claimPass, {
        pollMs,
        onError: (error) =>
          log("claiming threads failed", { error: error instanceof Error ? error.message : String(error) }),
      });
      unsubscribe = signals.onRunnable(() => loop?.wake());
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      for (const timer of wakeTimers) clearTimeout(timer);
      wakeTimers.clear();
      await loop?.stop();
      for (const { abort } of running.values()) abort.abort(new LeaseLost("server stopping"));
      await Promise.all([...running.values()].map((r) => r.done));
    },
  };
}
