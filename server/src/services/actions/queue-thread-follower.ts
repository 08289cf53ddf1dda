import type { InProcessScripts } from "../script/in-process-scripts.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { QueueThreads } from "./queue-ports.js";

/**
 * Follows a run's thread through the script service's WatchThread: the watch replays the thread's
 * events so far and then follows the shared database, so it sees a thread that a worker of any
 * process runs.
 */
export function scriptThreadFollower(scripts: Pick<InProcessScripts, "events">): QueueThreads {
  return {
    async *yields(orgId, threadId, signal) {
      for await (const event of scripts.events(orgId, threadId, signal)) {
        const kind = event.event?.case;
        if (kind === "completed" || kind === "failed" || kind === "cancelled") return;
        if (event.event?.case !== "yielded") continue;
        if (signal.aborted) return;
        const { stepPath = "", name = "", valueData } = event.event.value;
        const text = valueData ? Buffer.from(valueData).toString("utf8") : "null";
        yield { stepPath, stepName: name, value: progressValue(JSON.parse(text) as JsonValue) };
      }
    },
  };
}

/** A yielded value as a progress event carries it: an object as it is, anything else as `{value}`. */
export function progressValue(value: JsonValue): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : { value };
}
