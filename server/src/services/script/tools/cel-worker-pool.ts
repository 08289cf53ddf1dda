import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { ResourceLimits } from "node:worker_threads";
import { formatDuration } from "../dsl/duration.js";
import type { TransformTask, WorkerMessage } from "./cel-worker.js";
import { ToolError } from "./tool-error.js";
import type { JsonValue } from "./tool.js";

export interface CelWorkerPoolOptions {
  /** Most workers at once; default the machine's available parallelism (at least 1). */
  readonly size?: number;
  /** V8 limits of each worker: an expression past them stops its worker, not the server. */
  readonly resourceLimits?: ResourceLimits;
}

export interface TransformOptions {
  /** Stops the evaluation (the step was cancelled or timed out): its worker is terminated. */
  readonly signal: AbortSignal;
  /** Hard limit on the evaluation itself, counted from when a worker takes it. */
  readonly timeLimitMs: number;
}

export interface CelWorkerPool {
  /** Heap limit of one worker in MiB (0 when none is set): what the tool reports as its memory. */
  readonly memoryMiB: number;
  /** Evaluates a json.transform off the event loop; every failure is a ToolError. */
  transform(task: TransformTask, options: TransformOptions): Promise<JsonValue>;
  /** Terminates every worker; later and queued calls fail. */
  close(): Promise<void>;
}

/** Heap of one worker unless configured: room for a large document several times over. */
export const DEFAULT_WORKER_HEAP_MIB = 256;

const ENTRY = new URL("./cel-worker-entry.js", import.meta.url);

interface Job {
  readonly task: TransformTask;
  readonly signal: AbortSignal;
  readonly timeLimitMs: number;
  /** The worker running it; undefined while it waits in the queue. */
  slot: Slot | undefined;
  timer: NodeJS.Timeout | undefined;
  readonly onAbort: () => void;
  readonly resolve: (value: JsonValue) => void;
  readonly reject: (error: ToolError) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  job: Job | undefined;
  /** Set when the pool ends the worker itself, so its exit is no surprise. */
  retired: boolean;
  /** Why the worker died, when it reported an error before exiting. */
  fault: Error | undefined;
}

/**
 * A pool of worker threads evaluating json.transform expressions, so that a heavy expression
 * over a big input costs one core rather than stalling every request. Workers start on demand up
 * to `size` and stay for later calls; calls beyond that wait in order. A call past its time limit,
 * aborted by its signal, or whose worker dies (out of memory, crash) terminates that worker, and a
 * replacement starts at once. Idle workers do not keep the process alive; the server closes the
 * pool at shutdown.
 */
export function createCelWorkerPool(options: CelWorkerPoolOptions = {}): CelWorkerPool {
  const size = Math.max(1, options.size ?? availableParallelism());
  const resourceLimits: ResourceLimits = options.resourceLimits ?? { maxOldGenerationSizeMb: DEFAULT_WORKER_HEAP_MIB };
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  let closed = false;

  function spawn(): void {
    const slot: Slot = {
      worker: new Worker(ENTRY, { resourceLimits, name: "json.transform" }),
      ready: false,
      job: undefined,
      retired: false,
      fault: undefined,
    };
    slot.worker.on("message", (message: WorkerMessage) => onMessage(slot, message));
    slot.worker.on("error", (error) => (slot.fault = error));
    slot.worker.on("exit", () => onExit(slot));
    slots.add(slot);
  }

  function onMessage(slot: Slot, message: WorkerMessage): void {
    if (message.kind === "ready") slot.ready = true;
    else if (slot.job !== undefined) {
      if (message.kind === "result") finish(slot.job, message.value);
      else finish(slot.job, new ToolError(message.reason, message.message));
    }
    dispatch();
    // A starting or busy worker holds the process open (a call is waiting on it); an idle one does not.
    if (slot.job === undefined) slot.worker.unref();
  }

  function onExit(slot: Slot): void {
    slots.delete(slot);
    if (slot.job !== undefined) finish(slot.job, crashError(slot.fault, resourceLimits.maxOldGenerationSizeMb));
    if (closed) return;
    if (!slot.ready && !slot.retired) {
      // A worker that dies before it is ready would die again: fail the waiting calls instead of looping.
      const error = new ToolError(
        "failed",
        `json.transform: the evaluation worker did not start: ${slot.fault?.message ?? "it exited"}`,
        { cause: slot.fault },
      );
      for (const job of queue.splice(0)) finish(job, error);
      return;
    }
    // Replace it now, so that the next call does not pay a worker's start-up.
    if (slots.size < size) spawn();
    dispatch();
  }

  /** Settles a job and frees its worker, if it had one. */
  function finish(job: Job, outcome: JsonValue | ToolError): void {
    clearTimeout(job.timer);
    job.signal.removeEventListener("abort", job.onAbort);
    if (job.slot !== undefined) {
      job.slot.job = undefined;
      job.slot = undefined;
    }
    if (outcome instanceof ToolError) job.reject(outcome);
    else job.resolve(outcome);
  }

  /** Fails a running job with `error` and terminates its worker; onExit starts the replacement. */
  function stop(slot: Slot, error: ToolError): void {
    slot.retired = true;
    if (slot.job !== undefined) finish(slot.job, error);
    void slot.worker.terminate();
  }

  function dispatch(): void {
    while (queue.length > 0) {
      const idle = [...slots].find((slot) => slot.ready && slot.job === undefined && !slot.retired);
      if (idle === undefined) {
        const starting = [...slots].filter((slot) => !slot.ready).length;
        if (slots.size < size && starting < queue.length) spawn();
        return;
      }
      run(idle, queue.shift() as Job);
    }
  }

  function run(slot: Slot, job: Job): void {
    job.slot = slot;
    slot.job = job;
    slot.worker.ref();
    const limit = formatDuration(job.timeLimitMs);
    job.timer = setTimeout(
      () =>
        stop(
          slot,
          new ToolError(
            "timeout",
            `json.transform: the expression did not finish within the limit of ${limit} and was stopped`,
          ),
        ),
      job.timeLimitMs,
    );
    slot.worker.postMessage(job.task);
  }

  return {
    memoryMiB: resourceLimits.maxOldGenerationSizeMb ?? 0,

    transform(task, { signal, timeLimitMs }) {
      return new Promise<JsonValue>((resolve, reject) => {
        if (closed) return reject(stopping());
        if (signal.aborted) return reject(abortError(signal));
        const job: Job = {
          task,
          signal,
          timeLimitMs,
          slot: undefined,
          timer: undefined,
          resolve,
          reject,
          onAbort: () => {
            if (job.slot !== undefined) return stop(job.slot, abortError(signal));
            const index = queue.indexOf(job);
            if (index !== -1) queue.splice(index, 1);
            finish(job, abortError(signal));
          },
        };
        signal.addEventListener("abort", job.onAbort, { once: true });
        queue.push(job);
        dispatch();
      });
    },

    async close() {
      closed = true;
      for (const job of queue.splice(0)) finish(job, stopping());
      await Promise.all(
        [...slots].map((slot) => {
          stop(slot, stopping());
          return slot.worker.terminate();
        }),
      );
    },
  };
}

function stopping(): ToolError {
  return new ToolError("unavailable", "json.transform: the server is stopping");
}

/** The signal's own reason when it is a ToolError (the registry's timeout or cancel), else a cancel. */
function abortError(signal: AbortSignal): ToolError {
  const reason: unknown = signal.reason;
  return reason instanceof ToolError
    ? reason
    : new ToolError("cancelled", "json.transform: the call was cancelled", { cause: reason });
}

function crashError(fault: Error | undefined, heapMiB: number | undefined): ToolError {
  if ((fault as NodeJS.ErrnoException | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY") {
    const limit = heapMiB === undefined ? "its memory limit" : `its memory limit of ${heapMiB} MiB`;
    return new ToolError("failed", `json.transform: the expression needed more than ${limit} and was stopped`, {
      cause: fault,
    });
  }
  return new ToolError(
    "failed",
    `json.transform: the evaluation worker stopped unexpectedly: ${fault?.message ?? "it exited"}`,
    { cause: fault },
  );
}
