import { formatDuration, tryParseDuration as parseDuration } from "../dsl/duration.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import type { Tool } from "./tool.js";

export const MAX_SLEEP_MS = 60 * 60_000;

/**
 * `sleep`: waits, then answers how long it slept. It stops at once when its signal aborts (the
 * thread was cancelled or the call timed out), so a sleeping step never delays a cancellation.
 */
export function createSleepTool(): Tool {
  return {
    name: "sleep",
    version: NATIVE_TOOL_VERSION,
    description: `Waits for a duration such as 2s, 5m or 1h (at most ${formatDuration(MAX_SLEEP_MS)}).`,
    inputs: [
      {
        name: "duration",
        type: "string",
        required: true,
        description: `how long to wait, such as 500ms, 2s or 5m; at most ${formatDuration(MAX_SLEEP_MS)}`,
      },
    ],
    outputs: [{ name: "sleptMs", type: "integer", required: true, description: "milliseconds actually waited" }],
    // A minute above the longest sleep, so the registry's timeout never ends a valid one.
    runtime: nativeRuntime("sleep", MAX_SLEEP_MS + 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input, context) {
      const text = String(input.duration);
      const ms = parseDuration(text);
      if (ms === undefined)
        throw invalidInput(`sleep: duration ${JSON.stringify(text)} is not a duration such as 2s, 5m or 1h`);
      if (ms > MAX_SLEEP_MS)
        throw invalidInput(`sleep: duration ${text} is longer than the maximum of ${formatDuration(MAX_SLEEP_MS)}`);
      const started = performance.now();
      await delay(ms, context.signal);
      return { sleptMs: Math.round(performance.now() - started) };
    },
  };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
