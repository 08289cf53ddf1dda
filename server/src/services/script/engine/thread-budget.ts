import { DEFAULT_EXPRESSION_LIMITS, type ExpressionLimits } from "../dsl/cost-meter.js";
import type { JsonValue } from "../dsl/script-document.js";
import type { MemoryReservation } from "../tools/tool.js";
import { jsonSize } from "./json-size.js";

/**
 * The resources one run of a thread may hold, so that one script cannot take the server's
 * memory: nested `iterate` steps multiply (8 × 8 iterations at `maxConcurrency: 64` fetching
 * 9 MiB each took a server from 640 MiB to 2.6 GB).
 *
 * - Memory: the bytes of the step outputs the run holds (a list's step outputs until the list
 *   ends, then only its result, until the container step's own output replaces it) plus the
 *   bytes tools are reading for it (http.request counts its response body as it arrives). Sizes
 *   are those of the values' JSON text, which is what each output costs again when it is saved.
 *   The step whose output or read passes the limit fails, naming the step and the limit.
 * - Concurrency: iterations running at once, across every nested loop. Each running `iterate`
 *   may always run one iteration, so nested loops never wait on each other; any further
 *   iteration waits for a free slot.
 * - Expressions: the cost and time limits of each evaluation (dsl/cost-meter.ts).
 *
 * A budget lives as long as one run of the worker: everything it counts is released when the
 * run ends, however it ends.
 */

export interface ThreadLimits {
  /** Bytes of step outputs held plus bytes being read by tools, per thread. */
  readonly memoryBytes: number;
  /** Iterations running at once in one thread, across nested loops (beyond one per loop). */
  readonly concurrentIterations: number;
  readonly expressions: ExpressionLimits;
}

export const DEFAULT_THREAD_MEMORY_BYTES = 128 * 1024 * 1024;
export const DEFAULT_THREAD_CONCURRENT_ITERATIONS = 16;
export const DEFAULT_THREAD_LIMITS: ThreadLimits = {
  memoryBytes: DEFAULT_THREAD_MEMORY_BYTES,
  concurrentIterations: DEFAULT_THREAD_CONCURRENT_ITERATIONS,
  expressions: DEFAULT_EXPRESSION_LIMITS,
};

/** A step passed the thread's memory limit; the message names the step and the limit. */
export class ThreadMemoryExceeded extends Error {
  override name = "ThreadMemoryExceeded";
}

export class ThreadBudget {
  private used = 0;
  /** Output bytes held per step path, and bytes being read per step path. */
  private readonly held = new Map<string, number>();
  private readonly reading = new Map<string, number>();
  /** Results of finished child lists, per container step path, until that step's output replaces them. */
  private readonly results = new Map<string, number>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limits: ThreadLimits = DEFAULT_THREAD_LIMITS) {}

  /** Bytes counted now: held outputs, results and reads in flight. */
  get bytes(): number {
    return this.used;
  }

  /**
   * Counts the output of the step at `path`, replacing what its own reads and its child lists'
   * results counted; throws ThreadMemoryExceeded when it does not fit.
   */
  hold(path: string, name: string, output: JsonValue): void {
    this.take(this.reading, path);
    this.take(this.results, path);
    const size = jsonSize(output, this.limits.memoryBytes - this.used + 1);
    if (this.used + size > this.limits.memoryBytes) {
      throw this.exceeded(path, name, `its output of ${formatBytes(size)}`);
    }
    this.add(this.held, path, size);
  }

  /** The reservation for a tool call of the step at `path`; a new one drops an earlier attempt's bytes. */
  reads(path: string, name: string): MemoryReservation {
    this.take(this.reading, path);
    return {
      reserve: (bytes) => {
        if (this.used + bytes > this.limits.memoryBytes)
          throw this.exceeded(path, name, `reading ${formatBytes(bytes)} more`);
        this.add(this.reading, path, bytes);
      },
    };
  }

  /**
   * A list of steps: `settle` after each step releases what its reads still count (and counts
   * an output replayed from an earlier run); `close` releases the list's outputs, keeping its
   * result (the output at `resultPath`) counted for the container step at `containerPath`.
   */
  list(containerPath: string): {
    settle(path: string, output: JsonValue): void;
    close(resultPath: string | undefined): void;
  } {
    const paths: string[] = [];
    return {
      settle: (path, output) => {
        paths.push(path);
        this.take(this.reading, path);
        this.take(this.results, path);
        if (!this.held.has(path)) this.add(this.held, path, jsonSize(output, Number.POSITIVE_INFINITY));
      },
      close: (resultPath) => {
        for (const path of paths) {
          const size = this.take(this.held, path);
          if (path === resultPath && containerPath !== "") this.add(this.results, containerPath, size);
          else if (path === resultPath) this.add(this.held, path, size);
        }
      },
    };
  }

  /**
   * Waits for a slot to run one iteration; the loop's first lane (`first`) never waits. Returns
   * the release. Rejects if `signal` aborts while waiting.
   */
  async iteration(first: boolean, signal: AbortSignal): Promise<() => void> {
    if (first) return () => {};
    while (this.running >= this.limits.concurrentIterations) {
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.waiting.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }

  private add(map: Map<string, number>, path: string, bytes: number): void {
    map.set(path, (map.get(path) ?? 0) + bytes);
    this.used += bytes;
  }

  private take(map: Map<string, number>, path: string): number {
    const bytes = map.get(path) ?? 0;
    map.delete(path);
    this.used -= bytes;
    return bytes;
  }

  private exceeded(path: string, name: string, what: string): ThreadMemoryExceeded {
    return new ThreadMemoryExceeded(
      `step "${name}" (${path}) exceeded the thread's memory limit of ${formatBytes(this.limits.memoryBytes)}: ${what} ` +
        `on top of ${formatBytes(this.used)} already held or being read by the thread`,
    );
  }
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib >= 1) return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
  const kib = bytes / 1024;
  return kib >= 1 ? `${kib.toFixed(1)} KiB` : `${bytes} bytes`;
}
